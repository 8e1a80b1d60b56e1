"""Compiler and tools of the PROVE IT conformité corpus.

Data flow: ``corpus_src/`` (YAML) -> :mod:`generator.sources` (strict load) -> :mod:`generator.validate`
-> :mod:`generator.compile` (JSON documents) -> :mod:`generator.output` (``build/`` + ``manifest/``).
"""
