"""The command line: every argparse parser and command handler, and nothing imports this package."""
