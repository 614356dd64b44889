"""JavaScript extensions with npm dependencies of their own, started for real on the pinned
Copilot SDK: the first start installs them (offline, from local tarballs) and says so, the next
does not, a dependency list that names another SDK still gets the pinned one, and a dependency
that cannot be had leaves the extension ``failed`` with npm's reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extension_host.launch.npm_deps import MARKER
from extension_host.project.paths import project_logs_dir
from helpers import Project, copilot_sdk_marks, npm_package_json, npm_tarball, offline_npm, run, sdk_host

pytestmark = [*copilot_sdk_marks(), pytest.mark.slow]

ANSWER = """
import { joinSession } from "@github/copilot-sdk/extension";
import tinylib from "tinylib";

await joinSession({
  tools: [{ name: "answer", description: "What tinylib knows", handler: async () => `answer ${tinylib.answer}` }],
});
"""

SLOW_INSTALL = "node -e \"setTimeout(() => require('fs').writeFileSync('ran-install-script', ''), 2000)\""
"""An install script that takes two seconds (the status line shows after half a second)."""


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    offline_npm(monkeypatch, tmp_path / "npm-cache")


def test_a_user_extension_gets_its_dependencies_once_its_scripts_run_and_it_imports_the_pinned_sdk(
    project: Project, tmp_path: Path
) -> None:
    packages = tmp_path / "packages"
    tinylib = npm_tarball(packages, "tinylib", "module.exports = { answer: 42 };", scripts={"install": SLOW_INSTALL})
    other_sdk = npm_tarball(
        packages,
        "@github/copilot-sdk",
        "throw new Error('the extension imported the SDK of its own dependencies');",
        exports={".": "./index.js", "./extension": "./index.js"},
    )
    folder = project.add_extension("npmdemo", ANSWER, source="user", entry="extension.mjs")
    npm_package_json(folder, {"tinylib": f"file:{tinylib}", "@github/copilot-sdk": f"file:{other_sdk}"})
    log = project_logs_dir(project.home, project.root) / "user-npmdemo.log"

    first = project.run_command("call", "answer", timeout=180, status_line=True)
    assert (first.returncode, first.stdout.strip()) == (0, "answer 42"), first.stderr
    assert "starting user:npmdemo (installing npm dependencies…) ..." in first.stderr
    assert (folder / "node_modules" / "tinylib" / "ran-install-script").exists(), "a user extension's scripts run"
    assert "the SDK of its own" in (folder / "node_modules" / "@github" / "copilot-sdk" / "index.js").read_text()
    assert log.read_text().count("npm dependencies installed (npm install)") == 1

    second = project.run_command("call", "answer", timeout=180, status_line=True)
    assert (second.returncode, second.stdout.strip()) == (0, "answer 42"), second.stderr
    assert "installing npm dependencies" not in second.stderr
    assert log.read_text().count("npm dependencies installed") == 1, "the second start installs nothing"


def test_a_dependency_that_cannot_be_had_fails_the_extension_with_npms_reason(project: Project, tmp_path: Path) -> None:
    missing = tmp_path / "packages" / "nosuch-1.0.0.tgz"
    folder = project.add_extension("broken", ANSWER, entry="extension.mjs")
    npm_package_json(folder, {"tinylib": f"file:{missing}"})

    async def scenario() -> None:
        async with sdk_host(project) as host:
            (info,) = host.extensions
            assert info.status == "failed"
            assert info.error is not None
            assert info.error.startswith("could not install npm dependencies: npm error enoent ENOENT: "), info.error
            assert str(missing) in info.error and "\n" not in info.error
            assert info.activity is None and "tinylib" not in host.tools

    run(scenario(), timeout=180)
    assert not (folder / "node_modules").exists()

    listed = project.run_command("list", "--json", timeout=180, status_line=True)
    (entry,) = json.loads(listed.stdout)["extensions"]
    assert entry["status"] == "failed" and "npm error enoent" in entry["error"], "the next start tried again"
    assert not (folder / "node_modules" / MARKER).exists()
