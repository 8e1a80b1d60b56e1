"""``corpus index``: the season's close, published (spec §7, §9.1): the public index of a track and each
participant's report, built from ``corpus score``'s reports, never from a score computed another way.

Modules, one job each: :mod:`wording` (the fixed texts the spec imposes), :mod:`registrations` (the
registration file), :mod:`submissions` (the season service's submissions, read and routed), :mod:`merge`
(§9.1: DIDs linked to one key are one participant), :mod:`selection` (§7.4: the last one before the close),
:mod:`tables` (the two tables of §7.1-7.2), :mod:`report` (§7.5), :mod:`html` (the static pages),
:mod:`season_index` (the whole, assembled).
"""
