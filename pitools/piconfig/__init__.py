"""Pi's configuration: the agent dir, the files under it, JSONC reading, env precedence (read-only)."""
