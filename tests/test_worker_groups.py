"""How the suite is split across xdist workers (tests/conftest.py): the tests that share a fixture
of module scope run on one worker, so the fixture is made once per run, not once per worker."""

from __future__ import annotations

import os

import pytest

SHARING = 16
"""Tests sharing the fixture below: spread over workers, some would surely land elsewhere."""


@pytest.fixture(scope="module")
def maker() -> str | None:
    """The worker that made this module's fixture (``None`` outside xdist)."""
    return os.environ.get("PYTEST_XDIST_WORKER")


@pytest.mark.parametrize("index", range(SHARING))
def test_every_test_sharing_a_module_fixture_runs_on_the_worker_that_made_it(maker: str | None, index: int) -> None:
    assert os.environ.get("PYTEST_XDIST_WORKER") == maker, (
        f"test {index} of {SHARING} ran on another worker than its module fixture's: the tests are not grouped "
        "(tests/conftest.py marks them xdist_group; does this pytest-xdist still read the mark?)"
    )
