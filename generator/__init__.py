"""Compiler and tools of the PROVE IT corpus: one engine, tracks as data.

Layers, lowest first (each imports only from the layers before it; docs/architecture.md):
``base`` -> ``contract`` -> ``tracks`` -> ``compiler`` -> ``season`` -> ``score`` -> ``panel`` ->
``serving`` -> ``observe`` -> ``cli``.
"""
