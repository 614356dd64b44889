"""The package's version, in one place: ``pyproject.toml`` reads it from here, ``extensions
--version`` prints it, and a host reports it (its sessions, ``connect``) without reading the
installed distribution's metadata. Nothing else."""

__version__ = "0.1.0"
"""This package's version."""
