"""One module per command family, called by the CLI: the shift, the start check, audit, the
scaffold, the guard, the demo. Imports the edge and the core, never the entry points."""
