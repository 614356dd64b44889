"""Bridges: this project's extensions used by other agents (one module per agent or protocol).

Nothing here is imported eagerly, so a hook command that imports one bridge module pays for
that module only.
"""
