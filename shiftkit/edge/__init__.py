"""The edge: git, the files of a project, shiftkit's state in the git dir, claims as refs,
running verifiers. Imports only the core."""
