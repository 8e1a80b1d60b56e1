"""A season read: its sources (statements and key), the corpus as an agent reads it, a task's graph, what an
evaluation returns, the founding rule, and a track's code as one ``TrackLogic``. Both the season check
(:mod:`generator.proving`) and the scorer (:mod:`generator.score`) read a season through here, so neither
imports the other."""
