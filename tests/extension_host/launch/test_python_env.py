"""Building an extension's own Python environment: the key that names it, reuse of a ready one,
one build for two starts at once, and that a failed, timed-out or cancelled build leaves nothing
behind. The installer here is a stand-in ``uv`` (a shell script); real builds with pip and uv are
in ``tests/extension_host/runtime/test_requirements.py``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from extension_host.launch.python_env import (
    ENVIRONMENTS_FOLDER,
    READY_FILE,
    ensure_environment,
    environment_key,
    normalise,
)
from extension_host.launch.python_installer import RequirementsFailed
from extension_host.runtime.options import INSTALL_TIMEOUT_ENV
from helpers import process_exists, recording_program, run, wait_for_exit


def test_requirements_spelled_differently_are_one_environment() -> None:
    assert normalise(["Tiny_Greet >= 1.0", "rich", "rich", " requests  [socks] ; python_version >= '3.8'"]) == (
        "requests [socks] ; python_version >= '3.8'",
        "rich",
        "tiny-greet >= 1.0",
    )
    assert environment_key(["Tiny.Greet==1", "rich"]) == environment_key(["rich", "tiny-greet==1"])
    assert environment_key(["tinygreet==1"]) != environment_key(["tinygreet==2"])


def test_another_interpreter_makes_another_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = environment_key(["rich"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    assert environment_key(["rich"]) != before


def test_a_ready_environment_is_used_without_running_the_installer(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    uv = recording_program(tmp_path / "bin" / "uv", marker)
    target = tmp_path / "cache" / ENVIRONMENTS_FOLDER / environment_key(["tinygreet"])
    (target / "bin").mkdir(parents=True)
    (target / "bin" / "python").symlink_to(sys.executable)
    (target / READY_FILE).write_text("{}")
    told: list[str] = []
    env = {"PATH": str(uv.parent)}
    found = run(
        ensure_environment(
            ("tinygreet",), tmp_path / "cache", env, env, tmp_path / "x.log", on_build=told.append, timeout=60
        )
    )
    assert (found.folder, found.built, found.python) == (target, False, target / "bin" / "python")
    assert not marker.exists() and told == []


def _stand_in_uv(tmp_path: Path, body: str) -> dict[str, str]:
    """An environment whose PATH has a ``uv`` that runs ``body`` (a shell script), its pid in ``uv.pid``."""
    recording_program(tmp_path / "bin" / "uv", tmp_path / "uv.calls", f'echo $$ > "{tmp_path}/uv.pid"\n{body}')
    return {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}


def _left_in(cache: Path) -> list[str]:
    """What is in the environments folder besides lock files."""
    return sorted(path.name for path in (cache / ENVIRONMENTS_FOLDER).iterdir() if path.suffix != ".lock")


@pytest.mark.subprocess
def test_a_failed_install_says_why_in_one_line_and_leaves_nothing_not_even_an_earlier_interrupted_build(
    tmp_path: Path,
) -> None:
    env = _stand_in_uv(tmp_path, 'echo "error: No solution found: nosuchpkg==9 is not in the wheel folder" >&2; exit 2')
    cache, log = tmp_path / "cache", tmp_path / "greet.log"
    key = environment_key(["nosuchpkg==9"])
    interrupted = cache / ENVIRONMENTS_FOLDER / f".building-{key}-x1y2"
    (interrupted / "env").mkdir(parents=True)
    with pytest.raises(RequirementsFailed) as failed:
        run(ensure_environment(("nosuchpkg==9",), cache, env, env, log, extension_id="project:greet", timeout=60))
    assert (
        str(failed.value)
        == "uv could not make its environment: No solution found: nosuchpkg==9 is not in the wheel folder"
    )
    assert _left_in(cache) == []
    lines = log.read_text().splitlines()
    assert lines[0].startswith("=== ") and "starting project:greet: building its Python environment with uv" in lines[0]
    assert lines[-1] == "error: No solution found: nosuchpkg==9 is not in the wheel folder"


@pytest.mark.subprocess
def test_the_installer_runs_with_the_stripped_environment_and_the_users_index_settings(tmp_path: Path) -> None:
    env = _stand_in_uv(tmp_path, f'env > "{tmp_path}/seen.env"; exit 1')
    stripped = {**env, "HOME": str(tmp_path)}
    host = {**stripped, "GITHUB_TOKEN": "ghp_secret", "UV_FIND_LINKS": str(tmp_path / "wheels")}
    with pytest.raises(RequirementsFailed, match="it exited with code 1"):
        run(ensure_environment(("tinygreet",), tmp_path / "cache", stripped, host, tmp_path / "x.log", timeout=60))
    seen = dict(line.split("=", 1) for line in (tmp_path / "seen.env").read_text().splitlines() if "=" in line)
    assert "GITHUB_TOKEN" not in seen
    assert seen["UV_FIND_LINKS"] == str(tmp_path / "wheels")


@pytest.mark.subprocess
def test_an_install_past_its_timeout_is_killed_and_leaves_nothing(tmp_path: Path) -> None:
    env = _stand_in_uv(tmp_path, "exec sleep 60")
    with pytest.raises(RequirementsFailed, match=f"took over 0.5 s \\(set {INSTALL_TIMEOUT_ENV} to allow longer\\)"):
        run(ensure_environment(("tinygreet",), tmp_path / "cache", env, env, tmp_path / "x.log", timeout=0.5))
    assert wait_for_exit(int((tmp_path / "uv.pid").read_text()), timeout=5)
    assert _left_in(tmp_path / "cache") == []


@pytest.mark.subprocess
def test_a_cancelled_build_kills_its_installer_and_leaves_nothing(tmp_path: Path) -> None:
    env = _stand_in_uv(tmp_path, "exec sleep 60")
    pid_file = tmp_path / "uv.pid"

    async def scenario() -> int:
        told: list[str] = []
        build = asyncio.ensure_future(
            ensure_environment(
                ("tinygreet",), tmp_path / "cache", env, env, tmp_path / "x.log", on_build=told.append, timeout=60
            )
        )
        async with asyncio.timeout(10):
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.02)
        assert told == ["uv"]
        build.cancel()
        with pytest.raises(asyncio.CancelledError):
            await build
        return int(pid_file.read_text())

    pid = run(scenario())
    assert not process_exists(pid) or wait_for_exit(pid, timeout=5)
    assert _left_in(tmp_path / "cache") == []


@pytest.mark.subprocess
def test_a_second_build_of_the_same_environment_waits_for_the_first_and_uses_it(tmp_path: Path) -> None:
    """Two starts at once (two hosts, or two extensions of one): one builds, the other waits on
    the lock and finds the environment ready. The stand-in builds a ready folder by hand."""
    calls = tmp_path / "uv.calls"
    script = """
case "$1" in
  venv) sleep 0.5; mkdir -p "$4/bin" "$4/lib/python{v}/site-packages"; ln -s "{python}" "$4/bin/python" ;;
esac
""".format(v=f"{sys.version_info[0]}.{sys.version_info[1]}", python=sys.executable)
    env = _stand_in_uv(tmp_path, script)

    async def both() -> list[bool]:
        builds = [
            ensure_environment(("tinygreet",), tmp_path / "cache", env, env, tmp_path / "x.log", timeout=60)
            for _ in range(2)
        ]
        return [environment.built for environment in await asyncio.gather(*builds)]

    assert sorted(run(both())) == [False, True]
    assert [line.split()[1] for line in calls.read_text().splitlines()] == ["venv", "pip"]
    (ready,) = _left_in(tmp_path / "cache")
    record = json.loads((tmp_path / "cache" / ENVIRONMENTS_FOLDER / ready / READY_FILE).read_text())
    assert (record["requires"], record["installer"]) == (["tinygreet"], "uv")
    site_packages = next((tmp_path / "cache" / ENVIRONMENTS_FOLDER / ready / "lib").glob("python*/site-packages"))
    assert sorted(path.name for path in site_packages.iterdir()) == ["extension_protocol", "sdk_extension"]
    assert (site_packages / "sdk_extension" / "__main__.py").is_file()
