"""How the suite is split across xdist workers (tests/conftest.py): the tests that share a fixture
of module scope run on one worker, so the fixture is made once per run, not once per worker; the
tests of each value of a parametrized one run together, and apart from the other values'."""

from __future__ import annotations

import os

import pytest

SHARING = 16
"""Tests sharing each fixture below: spread over workers, some would surely land elsewhere."""
VALUES = 4
"""Values of the parametrized fixture."""


def made_once(factory: pytest.TempPathFactory, name: str) -> str | None:
    """Record that this worker made the fixture ``name``, in a folder every worker of the run
    shares; the other worker that made it before, if one did."""
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    record = shared / "worker-groups" / name
    record.parent.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    try:
        with record.open("x") as made:
            made.write(worker)
    except FileExistsError:
        return record.read_text()
    return None


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """This module's fixture: the worker that made it before, if another did."""
    return made_once(tmp_path_factory, "shared")


@pytest.mark.parametrize("index", range(SHARING))
def test_every_test_sharing_a_module_fixture_runs_on_the_worker_that_made_it(shared: str | None, index: int) -> None:
    assert shared is None, (
        f"test {index} of {SHARING} made its module fixture again (it was made on {shared}): the tests are not "
        "grouped (tests/conftest.py marks them xdist_group; does this pytest-xdist still read the mark?)"
    )


@pytest.fixture(scope="module", params=range(VALUES))
def value(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str | None]:
    """A value of this module's parametrized fixture, and the worker that made it before, if another did."""
    return request.param, made_once(tmp_path_factory, f"value-{request.param}")


@pytest.mark.parametrize("index", range(SHARING // VALUES))
def test_the_tests_of_one_value_of_a_parametrized_module_fixture_run_together_in_a_group_of_their_own(
    value: tuple[int, str | None], index: int, request: pytest.FixtureRequest
) -> None:
    number, before = value
    assert before is None, f"test {index} of value {number} made it again (it was made on {before})"
    group = request.node.get_closest_marker("xdist_group")
    assert group is not None and group.args[0].endswith(f"::value={number}"), group
