"""``python -m bench.hook_adapter`` runs end to end: every side answers, every hook call is a deny."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench import hook_adapter


def test_the_hook_adapter_bench_measures_every_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXTENSION_HOST_RUNTIME_DIR", raising=False)
    times = asyncio.run(asyncio.wait_for(hook_adapter.measure(tmp_path, 2, 1), 120))
    assert {name: len(values) for name, values in times.items()} == {"floor": 2, "imports": 2, "warm": 2, "cold": 1}
    assert all(seconds > 0 for values in times.values() for seconds in values)
