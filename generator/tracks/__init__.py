"""Tracks as data: the definition of a track (collections, links, barème, season) read from its track.yaml."""
