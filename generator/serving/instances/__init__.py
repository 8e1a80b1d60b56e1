"""Running instances: nginx started, reloaded and stopped, its configuration tested then written, a local
topology (a frontal over replicas) served and kept up, its state file. Imports
:mod:`generator.serving.rendering` and :mod:`generator.serving.tls`, never :mod:`generator.serving.releases`."""
