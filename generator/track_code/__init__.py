"""The code of each track: only its logic, one ``TrackLogic`` each (evaluator, shortcut readings, same-rank
sources, agents). The engine never imports these packages: it loads the module a track's ``track.yaml``
names (``code``) through :func:`generator.reading.logic.load_logic`."""
