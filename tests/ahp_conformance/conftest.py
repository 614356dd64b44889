"""Fixtures of the AHP differential test: the real Copilot CLI and the host's SDK cache, installed
once (the extension conformance suite's own fixtures)."""

from conformance.conftest import copilot_cli, sdk_cache

__all__ = ["copilot_cli", "sdk_cache"]
