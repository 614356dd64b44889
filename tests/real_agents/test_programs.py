"""The tier's installer with a stand-in npm: one install however many processes ask, a failed
install reported with npm's words and nothing half-installed left."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from real_agents.programs import CACHE_ENV, InstallError, Program, install

FAKE = Program("fake-agent", "1.2.3", entry="fake-agent/cli.js", node=True)

FAKE_NPM = """#!{python} -P
import sys, time
from pathlib import Path

args = sys.argv[1:]
prefix = Path(args[args.index("--prefix") + 1])
log = Path({log!r})
with log.open("a") as file:
    file.write(" ".join(args) + "\\n")
if Path({fail!r}).exists():
    print("npm error 404 Not Found - GET https://registry.npmjs.org/fake-agent", file=sys.stderr)
    sys.exit(1)
Path({started!r}).touch()
deadline = time.monotonic() + 30
while not Path({release!r}).exists() and time.monotonic() < deadline:
    time.sleep(0.01)
entry = prefix / "node_modules" / "fake-agent" / "cli.js"
entry.parent.mkdir(parents=True)
entry.write_text("// the agent")
"""


@pytest.fixture
def npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in ``npm`` first on the PATH and a cache folder of the test's own; the folder with
    the stand-in's control files (``log``: one line per run; ``release``: lets a run finish;
    ``started``: a run is under way; ``fail``: runs fail)."""
    folder = tmp_path / "npm-bin"
    folder.mkdir()
    script = folder / "npm"
    script.write_text(
        FAKE_NPM.format(
            python=sys.executable,
            log=str(folder / "log"),
            fail=str(folder / "fail"),
            started=str(folder / "started"),
            release=str(folder / "release"),
        )
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return folder


def test_two_installs_at_once_run_npm_once_and_both_get_the_program(npm: Path, tmp_path: Path) -> None:
    prefixes: list[Path] = []
    first = threading.Thread(target=lambda: prefixes.append(install(FAKE, timeout=30)))
    first.start()
    second = threading.Thread(target=lambda: prefixes.append(install(FAKE, timeout=30)))
    try:
        started = npm / "started"
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.exists(), "npm never started"
        second.start()  # while the first npm still runs: it must wait for it, not install again
    finally:
        (npm / "release").touch()
        first.join(timeout=30)
        if second.ident is not None:
            second.join(timeout=30)
    expected = tmp_path / "cache" / "npm" / "fake-agent@1.2.3"
    assert prefixes == [expected, expected]
    assert len((npm / "log").read_text().splitlines()) == 1
    assert (expected / "node_modules" / "fake-agent" / "cli.js").exists()
    assert install(FAKE, timeout=30) == expected
    assert len((npm / "log").read_text().splitlines()) == 1


def test_a_failed_install_says_what_npm_said_and_leaves_nothing_behind(npm: Path, tmp_path: Path) -> None:
    (npm / "fail").touch()
    with pytest.raises(InstallError, match="404 Not Found") as raised:
        install(FAKE, timeout=30)
    assert "fake-agent@1.2.3" in str(raised.value)
    assert [path.name for path in (tmp_path / "cache" / "npm").iterdir()] == [".lock"]
