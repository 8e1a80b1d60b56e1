"""What authors write, read strictly: YAML with positions, the JSON Schemas and their checks, a record that
names file, line and field. Below the tracks and the compiler, so that every layer reads a document one way."""
