"""TLS files checked (their form, then what each must do), local CAs and certificates, and the mutual TLS
between frontals and replicas. Imports nothing else of :mod:`generator.serving`."""
