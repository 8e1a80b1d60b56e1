"""The générique track's code (tracks/generique/track.yaml, ``code``): evaluator, shortcuts, agents."""
