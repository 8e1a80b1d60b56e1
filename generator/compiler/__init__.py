"""Sources to served bytes: strict YAML loading, validation, compilation into build/ and manifest/."""
