"""Sources to served bytes: a track's sources read in its layout, validated, compiled into build/ and manifest/
(and brought up to date before serving). Nothing imports it but the CLI."""
