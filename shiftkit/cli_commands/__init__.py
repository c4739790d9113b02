"""The click commands, by who runs them: `project` (a person's), `shift` (an agent's),
`reports`; `base` holds the group they register on."""
