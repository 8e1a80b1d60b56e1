"""A season made and proven: its published files (``season/taches.json``, ``season/cle.json``), the season
check that proves the key against the built corpus before anything is frozen, and ``corpus graph``'s
drawings. The season is read through :mod:`generator.reading`."""
