"""Watching a running corpus: crawling it as the proxy would, the access-log report."""
