"""``extensions doctor``: check the setup and every extension without starting any, and say what to fix.

One line per finding, each ``ok``, ``info``, ``warning`` or ``problem`` with what to do, in this
order: the Python running the host; Node.js and npm when a JavaScript extension exists (and the
cached Copilot SDK); the runtime folder of control sockets; the project's trust; the user's
enable/disable record and the Copilot CLI folder; each extension (:mod:`.doctor_extensions`); the
tool names they declare; and each agent bridge that ``extensions hook install`` wrote (Claude
Code, Gemini CLI), with whether the ``extensions`` command its hooks and ``PATH`` name is this
installation's. Exit 1 when there is a problem; warnings and notes alone exit 0.

Read-only: it changes no file, creates no folder, and starts no extension (``node --check``
parses a JavaScript file without running it). It never imports the host.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..errors import ExtensionHostError
from ..project.discovery import Discovered, discover
from ..project.enablement import EnablementStore
from ..project.paths import cache_dir, find_project_root, runtime_dir, user_home
from ..project.trust import TrustStore, decide_project_trust
from . import render
from .doctor_extensions import Finding, extension_findings, tool_findings
from .output import EXIT_FAILED, EXIT_OK, print_json, say

__all__ = ["MIN_NODE_MAJOR", "MIN_PYTHON", "doctor", "findings"]

MIN_PYTHON: Final = (3, 11)
MIN_NODE_MAJOR: Final = 20
"""The oldest Node.js the pinned Copilot SDK runs on."""
VERSION_TIMEOUT: Final = 10.0
_MARKS: Final = {"ok": "ok", "info": "--", "warning": "!!", "problem": "XX"}


def doctor(args: argparse.Namespace) -> int:
    """``extensions doctor [--json]``."""
    root = find_project_root(args.root)
    home = user_home(args.home)
    found = findings(root, home)
    failed = any(finding.level == "problem" for finding in found)
    if args.json:
        print_json({"project": str(root), "ok": not failed, "checks": [finding.to_json() for finding in found]})
    else:
        rows = [(_MARKS[f.level], render.safe_cell(f.subject), render.safe_cell(f.message)) for f in found]
        width = max((len(subject) for _, subject, _ in rows), default=0)
        say("\n".join(f"{mark}  {subject.ljust(width)}  {message}" for mark, subject, message in rows))
        problems = sum(1 for f in found if f.level == "problem")
        warnings = sum(1 for f in found if f.level == "warning")
        summary = f"{problems} problem{'s' if problems != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
        say(summary if failed or warnings else "everything looks right")
    return EXIT_FAILED if failed else EXIT_OK


def findings(root: Path, home: Path) -> list[Finding]:
    """Every finding for the project at ``root`` and the user home ``home``, in report order."""
    store = EnablementStore(home)
    choices = store.choices(root)
    trust = decide_project_trust(root, TrustStore(home))
    found = discover(root, home, untrusted=None if trust.trusted else "untrusted", choices=choices)
    result = [_python()]
    node = None
    if any(item.spec.runtime == "node" and not (item.disabled or item.shadowed_by) for item in found):
        node, node_findings = _node()
        result += node_findings
    result.append(_runtime_folder())
    result.append(_trust(root, found, trust.trusted, trust.problem))
    result += _record(store, choices.problem, choices.copilot_root)
    for item in found:
        result += extension_findings(item, node)
    if not found:
        result.append(Finding("info", "extensions", "none discovered; 'extensions scaffold NAME' creates one"))
    result += tool_findings(found)
    result += _bridges(root)
    return result


def _python() -> Finding:
    version = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] < MIN_PYTHON:
        wanted = ".".join(map(str, MIN_PYTHON))
        return Finding("problem", "python", f"Python {version} ({sys.executable}) is older than {wanted}")
    return Finding("ok", "python", f"Python {version} ({sys.executable})")


def _node() -> tuple[str | None, list[Finding]]:
    from ..launch.node_sdk import SDK_PACKAGE, SDK_VERSION

    node = shutil.which("node")
    if node is None:
        return None, [Finding("problem", "node", "node not found on PATH: install Node.js 20 or newer")]
    version = _version_of(node)
    major = _major(version)
    found = [
        Finding("problem", "node", f"Node.js {version} ({node}) is older than {MIN_NODE_MAJOR}: install a newer one")
        if major is not None and major < MIN_NODE_MAJOR
        else Finding("ok", "node", f"Node.js {version or '(version unknown)'} ({node})")
    ]
    sdk = cache_dir() / "node-sdk" / SDK_VERSION
    if (sdk / "installed.json").is_file():
        found.append(Finding("ok", "copilot sdk", f"{SDK_PACKAGE}@{SDK_VERSION} cached in {sdk}"))
    elif shutil.which("npm") is None:
        found.append(
            Finding(
                "problem", "npm", f"npm not found on PATH: it is needed once, to install {SDK_PACKAGE}@{SDK_VERSION}"
            )
        )
    else:
        found.append(
            Finding("info", "copilot sdk", f"{SDK_PACKAGE}@{SDK_VERSION} is installed with npm at the first start")
        )
    return node, found


def _version_of(program: str) -> str:
    try:
        result = subprocess.run(
            [program, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=VERSION_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout.strip().lstrip("v")


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _runtime_folder() -> Finding:
    from ..control.private_socket import check_private_folder

    try:
        folder = runtime_dir()
        exists = check_private_folder(folder)
    except ExtensionHostError as exc:
        return Finding("problem", "runtime folder", str(exc))
    except OSError as exc:
        return Finding("problem", "runtime folder", f"cannot be checked: {exc.strerror or exc}")
    if not exists:
        return Finding("ok", "runtime folder", f"{folder} (made, private, when a host first runs)")
    return Finding("ok", "runtime folder", f"{folder} is private to you")


def _trust(root: Path, found: Sequence[Discovered], trusted: bool, problem: str | None) -> Finding:
    project = [item for item in found if item.spec.source == "project"]
    if problem is not None:
        return Finding("problem", "trust", problem)
    if trusted:
        return Finding("ok", "trust", f"this project is trusted ({root})")
    if project:
        count = len(project)
        return Finding(
            "problem",
            "trust",
            f"this project is not trusted, so its {count} extension{'s do' if count > 1 else ' does'} not run: "
            "review .github/extensions, then run 'extensions trust'",
        )
    return Finding("info", "trust", "this project is not trusted (it has no extensions of its own)")


def _record(store: EnablementStore, problem: str | None, copilot_root: Path | None) -> list[Finding]:
    if problem is not None:
        return [Finding("problem", "enablement", problem.removeprefix("not run: "))]
    if copilot_root is None:
        return []
    if not copilot_root.is_dir():
        return [Finding("warning", "copilot folder", f"{copilot_root} is looked in but does not exist")]
    return [Finding("ok", "copilot folder", f"{copilot_root} is looked in ('extensions disable --copilot-folder')")]


def _bridges(root: Path) -> list[Finding]:
    from ..bridges.agent_hooks.claude import CLAUDE
    from ..bridges.agent_hooks.gemini import GEMINI
    from ..bridges.agent_hooks.install import COMMAND_NAME, check_hooks, find_extensions_command

    result: list[Finding] = []
    try:
        ours: Path | None = find_extensions_command()
    except ExtensionHostError:
        ours = None
    installed = False
    for agent, label in ((CLAUDE, "Claude Code"), (GEMINI, "Gemini CLI")):
        for scope in check_hooks(agent, root):
            installed = True
            subject = f"{agent.name} hooks ({scope.scope})"
            result += [Finding("problem", subject, f"{scope.path}: {problem}") for problem in scope.problems]
            if not scope.problems:
                result.append(Finding("ok", subject, f"{label} runs this project's hooks ({scope.path})"))
            for program in _hook_programs(scope.path, agent.name):
                if ours is not None and os.path.realpath(program) != os.path.realpath(ours):
                    result.append(
                        Finding(
                            "warning",
                            subject,
                            f"its hooks run {program}, not this installation's {ours}: "
                            f"'extensions hook install {agent.name}' points them here",
                        )
                    )
    on_path = shutil.which(COMMAND_NAME)
    if installed and ours is not None and on_path is not None and os.path.realpath(on_path) != os.path.realpath(ours):
        result.append(
            Finding("warning", "PATH", f"'{COMMAND_NAME}' on PATH is {on_path}, not this installation's {ours}")
        )
    return result


def _hook_programs(settings: Path, agent: str) -> set[str]:
    """The programs the hook commands of ``agent`` in a settings file run (absolute paths only)."""
    import json
    import shlex

    try:
        document = json.loads(settings.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return set()  # check_hooks said why
    programs: set[str] = set()
    pending = [document]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            command = item.get("command")
            if isinstance(command, str):
                try:
                    words = shlex.split(command)
                except ValueError:
                    words = []
                if len(words) >= 3 and words[1:3] == ["hook", agent] and os.sep in words[0]:
                    programs.add(words[0])
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return programs
