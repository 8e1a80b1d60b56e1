"""Shared utilities with no knowledge of corpora: errors, bounded reads, atomic writes, text policy, tree
transactions, secrets."""
