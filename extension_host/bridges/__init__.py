"""Bridges: this project's extensions used by other agents (one module per agent or protocol)."""
