"""A season proven and its files made: its published files (``season/taches.json``, ``season/cle.json``)
and the season check (``check-season``) that proves the key against the built corpus before anything is
frozen. The season's model is read through :mod:`generator.reading` (``reading/season_model.py``); its graphs
are drawn by :mod:`generator.drawing`."""
