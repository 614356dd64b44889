"""A JavaScript extension's npm dependencies: when an install is due, npm's command line and
environment, its reason when it fails, and real offline installs from local tarballs (once,
again when the files change, scripts only when allowed, nothing left behind on failure)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from extension_host.launch.npm_deps import (
    MARKER,
    SCRIPTS_SKIPPED,
    NpmInstallError,
    install_dependencies,
    npm_environment,
    npm_plan,
    npm_reason,
    scripts_allowed,
)
from extension_host.launch.npm_deps import _pending as _pending
from helpers import needs_npm, npm_package_json, npm_tarball, offline_npm, run


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    extension = tmp_path / "ext"
    extension.mkdir()
    return extension


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def test_a_folder_without_package_json_or_without_dependencies_needs_no_install(folder: Path, state: Path) -> None:
    assert npm_plan(folder, scripts=True, state_dir=state) is None
    (folder / "package.json").write_text('{"type": "module", "devDependencies": {"typescript": "^5"}}')
    assert npm_plan(folder, scripts=True, state_dir=state) is None


def test_a_dependency_on_the_sdk_alone_needs_no_install_the_host_provides_it(folder: Path, state: Path) -> None:
    npm_package_json(folder, {"@github/copilot-sdk": "^1.0.0"})
    assert npm_plan(folder, scripts=True, state_dir=state) is None
    npm_package_json(folder, {"@github/copilot-sdk": "^1.0.0"}, optionalDependencies={"left-pad": "1"})
    assert npm_plan(folder, scripts=True, state_dir=state) is not None


def test_without_a_lockfile_it_is_npm_install_writing_no_lockfile_with_one_npm_ci(folder: Path, state: Path) -> None:
    npm_package_json(folder, {"left-pad": "1.3.0"})
    plan = npm_plan(folder, scripts=True, state_dir=state)
    assert plan is not None and plan.command == "npm install"
    argv = plan.argv("/usr/bin/npm")
    assert argv[:4] == ("/usr/bin/npm", "install", "--prefix", str(folder))
    for flag in ("--omit=dev", "--no-audit", "--no-fund", "--no-update-notifier", "--global=false"):
        assert flag in argv
    assert "--package-lock=false" in argv and "--ignore-scripts" not in argv

    (folder / "package-lock.json").write_text("{}")
    locked = npm_plan(folder, scripts=False, state_dir=state)
    assert locked is not None and locked.command == "npm ci" and locked.lockfile == "package-lock.json"
    assert "--ignore-scripts" in locked.argv("npm") and "--package-lock=false" not in locked.argv("npm")
    (folder / "npm-shrinkwrap.json").write_text("{}")
    shrinkwrapped = npm_plan(folder, scripts=False, state_dir=state)
    assert shrinkwrapped is not None and shrinkwrapped.lockfile == "npm-shrinkwrap.json"


def test_node_modules_of_the_authors_own_is_left_alone(folder: Path, state: Path, tmp_path: Path) -> None:
    npm_package_json(folder, {"left-pad": "1.3.0"})
    (folder / "node_modules").mkdir()
    assert npm_plan(folder, scripts=True, state_dir=state) is None
    (folder / "node_modules").rmdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / MARKER).write_text('{"digest": "stale"}')
    (folder / "node_modules").symlink_to(tmp_path / "elsewhere")
    assert npm_plan(folder, scripts=True, state_dir=state) is None


def test_an_install_recorded_for_the_same_files_is_not_redone_a_changed_lockfile_is(folder: Path, state: Path) -> None:
    npm_package_json(folder, {"left-pad": "1.3.0"})
    (folder / "package-lock.json").write_text('{"lockfileVersion": 3}')
    plan = npm_plan(folder, scripts=True, state_dir=state)
    assert plan is not None
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / MARKER).write_text(json.dumps({"digest": plan.digest}))
    assert npm_plan(folder, scripts=True, state_dir=state) is None
    assert npm_plan(folder, scripts=False, state_dir=state) is not None, "scripts are part of what was installed"
    (folder / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {}}')
    assert npm_plan(folder, scripts=True, state_dir=state) is not None


def test_a_package_json_that_is_not_a_json_object_in_a_file_is_an_error_naming_it(folder: Path, state: Path) -> None:
    (folder / "package.json").write_text("{not json")
    with pytest.raises(NpmInstallError, match=r"package\.json is not valid JSON"):
        npm_plan(folder, scripts=True, state_dir=state)
    (folder / "package.json").write_text("[]")
    with pytest.raises(NpmInstallError, match=r"package\.json is not a JSON object"):
        npm_plan(folder, scripts=True, state_dir=state)
    (folder / "package.json").unlink()
    os.mkfifo(folder / "package.json")
    with pytest.raises(NpmInstallError, match=r"package\.json is not a regular file"):
        npm_plan(folder, scripts=True, state_dir=state)  # and never waits for a writer


@pytest.mark.parametrize(
    ("output", "reason", "code"),
    [
        (
            [
                "npm error code E404",
                "npm error 404 Not Found - GET https://registry.npmjs.org/nosuchpkg - Not found",
                "npm error 404",
                "npm error A complete log of this run can be found in: /home/u/.npm/_logs/x.log",
            ],
            "npm error 404 Not Found - GET https://registry.npmjs.org/nosuchpkg - Not found",
            "E404",
        ),
        (
            [
                "npm warn tarball tarball data for x@file:../x.tgz (null) seems to be corrupted. Trying again.",
                "npm error code ENOENT",
                "npm error syscall open",
                "npm error path /tmp/x.tgz",
                "npm error errno -2",
                "npm error enoent ENOENT: no such file or directory, open '/tmp/x.tgz'",
                "npm error enoent This is related to npm not being able to find a file.",
                "npm error enoent",
            ],
            "npm error enoent ENOENT: no such file or directory, open '/tmp/x.tgz'",
            "ENOENT",
        ),
        (
            ["npm error code ETARGET", "npm error notarget No matching version found for left-pad@^99."],
            "npm error notarget No matching version found for left-pad@^99.",
            "ETARGET",
        ),
        (["something went wrong", ""], "something went wrong", None),
        ([], "no output", None),
    ],
)
def test_npms_reason_is_its_telling_error_line_and_its_code(output: list[str], reason: str, code: str | None) -> None:
    assert npm_reason(output) == (reason, code)


def test_npm_gets_the_stripped_environment_plus_the_users_npm_settings() -> None:
    base = {"PATH": "/usr/bin", "HOME": "/home/u"}
    host = {
        **base,
        "GITHUB_TOKEN": "secret",
        "npm_config_//registry.example/:_authToken": "t",
        "NPM_CONFIG_CACHE": "/c",
    }
    assert npm_environment(base, host) == {
        **base,
        "npm_config_//registry.example/:_authToken": "t",
        "NPM_CONFIG_CACHE": "/c",
    }


def test_dependency_scripts_run_for_project_and_user_extensions_only() -> None:
    assert scripts_allowed("project") and scripts_allowed("user")
    assert not scripts_allowed("distribution")


def test_without_npm_the_install_fails_in_one_line_saying_npm_is_needed(folder: Path, state: Path) -> None:
    npm_package_json(folder, {"left-pad": "1.3.0"})
    plan = npm_plan(folder, scripts=True, state_dir=state)
    assert plan is not None
    with pytest.raises(NpmInstallError) as caught:
        run(
            install_dependencies(
                plan, environment={"PATH": str(folder)}, log_path=folder.parent / "x.log", state_dir=state
            )
        )
    assert str(caught.value) == (
        f"npm not found on PATH: it is needed to install the dependencies in {folder / 'package.json'} "
        "(it usually comes with Node.js)"
    )
    assert not (folder / "node_modules").exists()


# -- real installs, offline ------------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    offline_npm(monkeypatch, tmp_path / "npm-cache")


def real_npm(test: Callable[..., None]) -> Callable[..., None]:
    """A test that runs npm for real, offline (its cache in the test's folder); skipped without npm."""
    marked: Callable[..., None] = pytest.mark.usefixtures("offline")(pytest.mark.subprocess(needs_npm(test)))
    return marked


@pytest.fixture
def tinylib(folder: Path, tmp_path: Path) -> Path:
    """A local package ``tinylib`` (a tarball), which ``folder``'s ``package.json`` depends on."""
    tarball = npm_tarball(tmp_path / "packages", "tinylib", "module.exports = { answer: 42 };")
    npm_package_json(folder, {"tinylib": f"file:{tarball}"})
    return tarball


def install(folder: Path, state: Path, log: Path, *, scripts: bool = True, timeout: float = 120) -> bool:
    plan = npm_plan(folder, scripts=scripts, state_dir=state)
    if plan is None:
        return False
    return run(
        install_dependencies(plan, environment=os.environ, log_path=log, state_dir=state, timeout=timeout),
        timeout=timeout + 30,
    )


@real_npm
def test_a_local_dependency_is_installed_once_and_again_when_package_json_changes(
    folder: Path, state: Path, tmp_path: Path, tinylib: Path
) -> None:
    log = tmp_path / "logs" / "ext.log"

    assert install(folder, state, log) is True
    installed = folder / "node_modules" / "tinylib" / "index.js"
    assert installed.read_text() == "module.exports = { answer: 42 };"
    record = json.loads((folder / "node_modules" / MARKER).read_text())
    assert record["command"] == "npm install" and record["scripts"] is True
    text = log.read_text()
    assert f"starting npm dependencies of {folder}: " in text and "npm dependencies installed (npm install)" in text
    assert not (folder / "package-lock.json").exists(), "npm install writes no lockfile into the extension"
    assert list(state.glob("*.installing")) == []

    assert install(folder, state, log) is False, "the same files: nothing to do"
    assert log.read_text() == text

    npm_package_json(folder, {"tinylib": f"file:{tinylib}"}, description="changed")
    assert install(folder, state, log) is True
    assert log.read_text().count("npm dependencies installed") == 2


@real_npm
@pytest.mark.usefixtures("tinylib")
def test_a_lockfile_installs_with_npm_ci(folder: Path, state: Path, tmp_path: Path) -> None:
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--no-audit", "--no-fund"],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert install(folder, state, tmp_path / "ext.log") is True
    assert json.loads((folder / "node_modules" / MARKER).read_text())["command"] == "npm ci"
    assert (folder / "node_modules" / "tinylib" / "index.js").is_file()


@real_npm
def test_a_dependency_that_is_not_there_fails_with_npms_reason_leaving_nothing_and_is_retried(
    folder: Path, state: Path, tmp_path: Path, tinylib: Path
) -> None:
    missing = tmp_path / "packages" / "nosuch-1.0.0.tgz"
    npm_package_json(folder, {"tinylib": f"file:{tinylib}", "nosuch": f"file:{missing}"})
    log = tmp_path / "ext.log"

    with pytest.raises(NpmInstallError) as caught:
        install(folder, state, log)
    message = str(caught.value)
    assert message.startswith("could not install npm dependencies: npm error enoent ENOENT: no such file or directory")
    assert str(missing) in message and "(ENOENT, npm install exit " in message and "\n" not in message
    assert not (folder / "node_modules").exists()
    assert list(state.glob("*.installing")) == []
    assert "npm error code ENOENT" in log.read_text(), "npm's output is in the log"
    assert npm_plan(folder, scripts=True, state_dir=state) is not None, "the next start tries again"


@real_npm
def test_a_registry_package_offline_fails_enotcached(folder: Path, state: Path, tmp_path: Path) -> None:
    npm_package_json(folder, {"surely-not-cached-package-xyz": "^1.0.0"})
    with pytest.raises(NpmInstallError, match=r"\(ENOTCACHED, npm install exit \d+;"):
        install(folder, state, tmp_path / "ext.log")
    assert not (folder / "node_modules").exists()


@real_npm
def test_dependency_install_scripts_run_only_when_allowed_and_the_log_says_when_not(
    folder: Path, state: Path, tmp_path: Path
) -> None:
    tarball = npm_tarball(tmp_path / "packages", "scripted", "module.exports = 1;", install_script=True)
    npm_package_json(folder, {"scripted": f"file:{tarball}"})
    evidence = folder / "node_modules" / "scripted" / "ran-install-script"
    log = tmp_path / "ext.log"

    assert install(folder, state, log, scripts=False) is True
    assert (folder / "node_modules" / "scripted" / "index.js").is_file() and not evidence.exists()
    assert SCRIPTS_SKIPPED in log.read_text()

    assert install(folder, state, log, scripts=True) is True, "allowed now: installed again, scripts and all"
    assert evidence.exists()


@real_npm
def test_an_install_past_its_time_is_stopped_and_leaves_nothing(folder: Path, state: Path, tmp_path: Path) -> None:
    source = tmp_path / "hang"
    source.mkdir()
    (source / "package.json").write_text(
        json.dumps(
            {"name": "hang", "version": "1.0.0", "scripts": {"install": 'node -e "setTimeout(() => {}, 600000)"'}}
        )
    )
    npm_package_json(folder, {"hang": f"file:{source}"})
    with pytest.raises(NpmInstallError, match=r"^installing npm dependencies \(npm install\) took over 3 s"):
        install(folder, state, tmp_path / "ext.log", timeout=3)
    assert not (folder / "node_modules").exists()
    assert list(state.glob("*.installing")) == []


@real_npm
@pytest.mark.usefixtures("tinylib")
def test_an_install_cut_short_is_redone_even_though_node_modules_is_there(
    folder: Path, state: Path, tmp_path: Path
) -> None:
    assert install(folder, state, tmp_path / "ext.log") is True
    # As a host killed half-way leaves it: the record of the install under way, no marker.
    (folder / "node_modules" / MARKER).unlink()
    (folder / "node_modules" / "tinylib" / "index.js").unlink()
    assert npm_plan(folder, scripts=True, state_dir=state) is None, "without the record it is the author's own"
    _pending(state, folder).write_text(str(folder))

    assert install(folder, state, tmp_path / "ext.log") is True
    assert (folder / "node_modules" / "tinylib" / "index.js").is_file()
    assert not _pending(state, folder).exists()
