"""Benchmarks of the extension host against the floors it cannot beat (run ``python -m bench``)."""
