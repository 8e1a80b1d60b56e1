"""Releases: one made and installed beside the served one, then switched to; ``release pack`` and ``release
install`` (an artifact and its members). May import every other part of :mod:`generator.serving`."""
