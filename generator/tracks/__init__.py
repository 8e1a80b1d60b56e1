"""Tracks as data: the definition of a track (collections, links, barème, season), and its loading from its
``track.yaml``, strictly, every name checked."""
