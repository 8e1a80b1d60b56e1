"""The code of the conformité track: what is logic, not data (``tracks/conformite/track.yaml``, ``code``
names :mod:`.logic`). The package imports nothing, so that the independent agents (:mod:`.independent`)
can be loaded without the evaluator they must not read."""
