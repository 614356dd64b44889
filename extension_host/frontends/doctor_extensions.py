"""What ``extensions doctor`` finds in each extension's folder, without running any of it.

For one discovered extension: whether its name and entry file are in order (discovery's
problem), whether its manifest reads (:func:`~extension_host.project.manifest.read_manifest`),
whether its entry file parses (Python: compiled to a syntax tree, never run, a syntax error
reported as ``file:line:col``; JavaScript: ``node --check``, which parses and runs nothing), its
declared Python requirements, and for a JavaScript one whether the dependencies its
``package.json`` declares are in ``node_modules``. And across extensions, the tool names a
Python extension declares, read from its syntax tree (``@tool``, ``@tool(name=...)``,
``Tool(name=...)``): names that break the rule, and names two extensions both claim. That is
best effort: a name computed at run time is "could not tell", never a guess. JavaScript
extensions' tools are known only once they run.

Each finding is a :class:`Finding`; what is shown and how is :mod:`.doctor`'s.
"""

from __future__ import annotations

import ast
import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from extension_protocol.tools import TOOL_NAME_PATTERN

from ..errors import ManifestError
from ..project.discovery import Discovered
from ..project.manifest import read_manifest

__all__ = ["Finding", "Level", "extension_findings", "static_tool_names", "tool_findings"]

Level = Literal["ok", "info", "warning", "problem"]
NODE_CHECK_TIMEOUT: Final = 20.0
"""Seconds ``node --check`` has to parse one entry file."""
MAX_SOURCE_BYTES: Final = 4 * 1024 * 1024
"""An entry file larger than this is not parsed (it is reported instead)."""
_TOOL_RULE: Final = "a tool name has 1 to 64 letters, digits, '_' or '-'"


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the doctor's report: how bad, about what, and what to do."""

    level: Level
    subject: str
    """What it is about: ``python``, ``runtime folder``, an extension id, ``claude hooks``, ..."""
    message: str

    def to_json(self) -> dict[str, str]:
        """The ``--json`` form."""
        return {"level": self.level, "subject": self.subject, "message": self.message}


@dataclass(frozen=True, slots=True)
class ToolNames:
    """The tool names read from a Python extension's syntax tree."""

    names: tuple[tuple[str, int], ...]
    """(name, line) for every name it declares."""
    undetermined: int
    """How many declarations name their tool in a way only running it would tell."""


def extension_findings(found: Discovered, node: str | None) -> list[Finding]:
    """Everything wrong with one extension's folder (an ``ok`` line when nothing is);
    ``node``: the ``node`` executable, if there is one."""
    spec = found.spec
    subject = spec.id
    if found.disabled:
        return [Finding("info", subject, found.disabled)]
    if found.shadowed_by:
        return [Finding("info", subject, f"shadowed by {found.shadowed_by}: it does not run")]
    findings: list[Finding] = []
    if found.problem:
        findings.append(Finding("problem", subject, found.problem))
    try:
        manifest = read_manifest(spec.folder)
    except ManifestError as exc:
        findings.append(Finding("problem", subject, f"manifest: {exc}"))
    else:
        if manifest.requires:
            count = len(manifest.requires)
            findings.append(
                Finding(
                    "info",
                    subject,
                    f"declares {count} Python requirement{'s' if count > 1 else ''} "
                    f"({', '.join(manifest.requires[:3])}{', ...' if count > 3 else ''}); "
                    "its environment is built when it first starts",
                )
            )
    syntax = _python_syntax(spec.entry) if spec.runtime == "python" else _node_syntax(spec.entry, node)
    if syntax is not None:
        findings.append(Finding("problem", subject, syntax))
    if spec.runtime == "node":
        findings += _npm_findings(subject, spec.folder)
    if not any(finding.level == "problem" for finding in findings):
        untrusted = " (not run until the project is trusted)" if found.untrusted else ""
        findings.insert(0, Finding("ok", subject, f"{spec.entry_name} parses{untrusted}"))
    return findings


def _read_source(entry: Path) -> bytes | str:
    """The entry file's bytes, or why they cannot be had."""
    try:
        if entry.stat().st_size > MAX_SOURCE_BYTES:
            return f"{entry.name} is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MB: not checked"
        return entry.read_bytes()
    except OSError as exc:
        return f"cannot read {entry}: {exc.strerror or exc}"


def _python_syntax(entry: Path) -> str | None:
    """``None`` if the file parses, else the syntax error as ``SyntaxError: msg at file:line:col``."""
    source = _read_source(entry)
    if isinstance(source, str):
        return source
    try:
        ast.parse(source, filename=entry.name)
    except SyntaxError as exc:
        where = f"{entry.name}:{exc.lineno or 0}:{exc.offset or 0}"
        return f"{type(exc).__name__}: {exc.msg} at {where}"
    except ValueError as exc:  # null bytes
        return f"{entry.name} cannot be parsed: {exc}"
    return None


def _node_syntax(entry: Path, node: str | None) -> str | None:
    if node is None:
        return None  # said once, for every JavaScript extension, by the node check
    try:
        result = subprocess.run(
            [node, "--check", str(entry)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=NODE_CHECK_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"node --check did not finish within {NODE_CHECK_TIMEOUT:g} s"
    except OSError as exc:
        return f"node --check could not run: {exc.strerror or exc}"
    if result.returncode == 0:
        return None
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    error = next((line for line in lines if "Error" in line), lines[-1] if lines else "it does not parse")
    where = lines[0].replace(str(entry.parent) + "/", "") if lines and lines[0].startswith(str(entry)) else None
    return f"{error.strip()} at {where}" if where else error.strip()


def _npm_findings(subject: str, folder: Path) -> list[Finding]:
    manifest = folder / "package.json"
    if not manifest.is_file():
        return []
    try:
        package = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [Finding("problem", subject, f"package.json cannot be read: {exc}")]
    declared = package.get("dependencies") if isinstance(package, dict) else None
    if not isinstance(declared, dict) or not declared:
        return []
    missing = sorted(name for name in declared if not (folder / "node_modules" / str(name) / "package.json").is_file())
    if not missing:
        return [Finding("ok", subject, f"its {len(declared)} npm dependencies are installed")]
    install = "npm ci" if (folder / "package-lock.json").is_file() else "npm install --omit=dev"
    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
    return [
        Finding(
            "problem",
            subject,
            f"npm dependencies not installed ({shown}): run '{install}' in {folder}",
        )
    ]


def static_tool_names(entry: Path) -> ToolNames | None:
    """The tool names a Python extension declares, from its syntax tree (``None``: it does not parse)."""
    source = _read_source(entry)
    if isinstance(source, str):
        return None
    try:
        tree = ast.parse(source, filename=entry.name)
    except (SyntaxError, ValueError):
        return None
    names: list[tuple[str, int]] = []
    undetermined = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                if _callee(decorator) == "tool":
                    name = _keyword(decorator, "name") if isinstance(decorator, ast.Call) else None
                    if name is None or isinstance(name, str):
                        names.append((name or node.name, decorator.lineno))
                    else:
                        undetermined += 1
        elif isinstance(node, ast.Call) and _callee(node.func) == "Tool":
            name = _keyword(node, "name")
            if name is None and node.args:
                name = _constant(node.args[0])
            if isinstance(name, str):
                names.append((name, node.lineno))
            else:
                undetermined += 1
    return ToolNames(tuple(names), undetermined)


def _callee(node: ast.expr) -> str | None:
    """``tool`` for ``@tool``, ``@tool(...)``, ``@sdk.tool`` and ``@sdk.tool(...)``."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


_UNKNOWN: Final = object()


def _keyword(call: ast.expr, keyword: str) -> str | object | None:
    """A keyword argument's constant text; ``None`` when absent, :data:`_UNKNOWN` when not a constant."""
    if not isinstance(call, ast.Call):
        return None
    for item in call.keywords:
        if item.arg == keyword:
            return _constant(item.value)
    return None


def _constant(node: ast.expr) -> str | object:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return _UNKNOWN


def tool_findings(found: Sequence[Discovered]) -> list[Finding]:
    """Tool names that break the rule, or that two extensions meant to run both declare, as far
    as their Python source tells; a line for each extension whose names could not all be told."""
    findings: list[Finding] = []
    owners: dict[str, list[str]] = {}
    for item in _meant_to_run_python(found):
        spec = item.spec
        declared = static_tool_names(spec.entry)
        if declared is None:
            continue  # its syntax error is reported already
        for name, line in declared.names:
            if not TOOL_NAME_PATTERN.fullmatch(name):
                findings.append(
                    Finding(
                        "problem", spec.id, f"tool name {name!r} at {spec.entry_name}:{line} is invalid: {_TOOL_RULE}"
                    )
                )
            owners.setdefault(name, [])
            if spec.id not in owners[name]:
                owners[name].append(spec.id)
        if declared.undetermined:
            findings.append(
                Finding(
                    "info",
                    spec.id,
                    f"could not tell {declared.undetermined} of its tool names without running it (computed names)",
                )
            )
    for name, ids in sorted(owners.items()):
        if len(ids) > 1:
            findings.append(
                Finding(
                    "problem",
                    ids[1],
                    f"tool {name!r} is also declared by {', '.join(ids[:1] + ids[2:])}: the later in load order "
                    "fails to load; rename one of them",
                )
            )
    return findings


def _meant_to_run_python(found: Iterable[Discovered]) -> Iterable[Discovered]:
    """The Python extensions that run, or would once their project is trusted."""
    return (
        item
        for item in found
        if item.spec.runtime == "python" and item.problem is None and not (item.disabled or item.shadowed_by)
    )
