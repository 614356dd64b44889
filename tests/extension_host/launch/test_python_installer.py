"""The installer that builds an extension's environment: uv or pip, its command lines (the
requirements after ``--``, one argument each), the environment it sees, its timeout, and the one
line that says why it failed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from extension_host.launch.python_installer import (
    INSTALLER_ENV,
    RequirementsFailed,
    build_steps,
    choose_installer,
    installer_environment,
    installer_reason,
)
from helpers import recording_program

PIP_FAILURE = """\
Looking in links: /tmp/wheels
ERROR: Could not find a version that satisfies the requirement nosuchpkg==9 (from versions: none)
ERROR: No matching distribution found for nosuchpkg==9
""".splitlines()
UV_BECAUSE = (
    "Because nosuchpkg was not found in the provided package locations and you require nosuchpkg==9, "
    "we can conclude that your requirements are unsatisfiable."
)
UV_FAILURE = [
    "  × No solution found when resolving dependencies:",
    f"  ╰─▶ {UV_BECAUSE}",
    "",
    "      hint: Packages were unavailable because index lookups were disabled and no additional package "
    "locations were provided (try: `--find-links <uri>`)",
]


def test_the_installer_is_uv_when_it_is_on_the_path_unless_pip_is_asked_for(tmp_path: Path) -> None:
    uv = recording_program(tmp_path / "bin" / "uv", tmp_path / "ran")
    with_uv = {"PATH": str(uv.parent)}
    assert choose_installer(with_uv) == ("uv", str(uv))
    assert choose_installer({**with_uv, INSTALLER_ENV: "pip"}) == ("pip", None)
    assert choose_installer({"PATH": str(tmp_path)}) == ("pip", None)
    with pytest.raises(RequirementsFailed, match="uv is not on the PATH"):
        choose_installer({"PATH": str(tmp_path), INSTALLER_ENV: "uv"})
    with pytest.raises(RequirementsFailed, match="give uv or pip"):
        choose_installer({INSTALLER_ENV: "conda"})


def test_requirements_reach_the_installer_after_a_double_dash_one_argument_each(tmp_path: Path) -> None:
    requires = ("tinygreet==1.0", "rich ; python_version >= '3.8'")
    venv = tmp_path / "env"
    for steps in (
        build_steps("uv", "/usr/bin/uv", venv, requires),
        build_steps("pip", None, venv, requires),
        build_steps("pip", None, venv, requires, host_pip=False),
    ):
        make, install = steps
        assert str(venv) in make
        assert install[-3:] == ("--", *requires)
        assert "--user" not in install and "--system-site-packages" not in make
    assert build_steps("pip", None, venv, requires)[0][:2] == (sys.executable, "-P")
    assert "--without-pip" in build_steps("pip", None, venv, requires)[0]
    assert build_steps("pip", None, venv, requires, host_pip=False)[1][0] == str(venv / "bin" / "python")


def test_the_installer_sees_no_secret_but_the_users_index_settings_and_installs_nowhere_else() -> None:
    host = {
        "PATH": "/usr/bin",
        "GITHUB_TOKEN": "ghp_secret",
        "PIP_INDEX_URL": "https://user:s3cret@pypi.example.com/simple",
        "PIP_NO_INDEX": "1",
        "UV_INDEX_PRIVATE_PASSWORD": "hunter2",
        "PIP_TARGET": "/somewhere/else",
        "UV_PYTHON": "/other/python",
        "PYTHONPATH": "/the/host/checkout",
    }
    stripped = {name: value for name, value in host.items() if name not in ("GITHUB_TOKEN", "PIP_INDEX_URL")}
    stripped.pop("UV_INDEX_PRIVATE_PASSWORD")
    env = installer_environment(stripped, host)
    assert "GITHUB_TOKEN" not in env
    assert env["PIP_INDEX_URL"] == host["PIP_INDEX_URL"]
    assert env["UV_INDEX_PRIVATE_PASSWORD"] == "hunter2"
    assert env["PIP_NO_INDEX"] == "1" and env["PATH"] == "/usr/bin"
    assert not {"PIP_TARGET", "UV_PYTHON", "PYTHONPATH"} & env.keys()
    assert env["PIP_USER"] == "0"


def test_the_reason_of_a_failed_install_is_the_installers_last_meaningful_line() -> None:
    assert installer_reason(PIP_FAILURE) == "No matching distribution found for nosuchpkg==9"
    assert installer_reason(UV_FAILURE) == UV_BECAUSE
    assert installer_reason(["error: Failed to fetch: `https://pypi.org/simple/x/`"]) == (
        "Failed to fetch: `https://pypi.org/simple/x/`"
    )
    assert installer_reason(["x" * 1000]) == "x" * 299 + "…"
    assert installer_reason([]) is None
