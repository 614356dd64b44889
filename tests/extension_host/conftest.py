"""Fixtures of the host's tests that start JavaScript extensions: one Copilot SDK install for the
whole test session (the host installs it into a cache folder on first need)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from extension_host.paths import CACHE_ENV


@pytest.fixture(scope="session")
def sdk_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One SDK install shared by every test of the session (it is the slow part)."""
    yield tmp_path_factory.mktemp("sdk-cache")


@pytest.fixture
def use_sdk_cache(sdk_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hosts of this test install the SDK into the session's shared cache folder."""
    monkeypatch.setenv(CACHE_ENV, str(sdk_cache))
