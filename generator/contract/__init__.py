"""What the corpus publishes and others rely on: hashes as the proxy computes them, the manifest, the
freeze record, the build proof."""
