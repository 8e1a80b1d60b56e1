"""Season 1 of the conformité track: task statements, the sealed key, the reference evaluator that
applies ``/referentiel`` to the built bytes, the shortcut strategies behind the traps, and the season
check that proves them before anything is frozen."""
