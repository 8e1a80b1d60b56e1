"""``corpus graph``'s pictures: a task's graph as drawing data, as DOT text, and the index pages that
link them. The season's model is read through :mod:`generator.reading`; nothing here proves the season
(that is :mod:`generator.proving`)."""
