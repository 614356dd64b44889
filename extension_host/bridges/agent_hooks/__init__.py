"""agent_hooks."""
