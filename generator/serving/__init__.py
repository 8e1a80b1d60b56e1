"""Serving the frozen bytes, in four parts that import one way only (each may import those before it):
:mod:`~generator.serving.tls` (TLS files, local CAs, mutual TLS between frontals and replicas),
:mod:`~generator.serving.rendering` (an instance's settings rendered into nginx and systemd configuration),
:mod:`~generator.serving.instances` (nginx started, written, reloaded, kept up; local topologies) and
:mod:`~generator.serving.releases` (a release made, installed, packed as an artifact)."""
