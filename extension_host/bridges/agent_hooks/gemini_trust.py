"""Whether Gemini CLI trusts a project folder, and so runs the hooks in its ``.gemini/settings.json``.

Gemini CLI (0.61) loads a project's settings, hooks included, only in a folder it trusts, and
decides as follows (``checkPathTrust`` in its bundle), first match wins:

1. ``GEMINI_CLI_TRUST_WORKSPACE=false`` (or ``GEMINI_RESTRICTED_MODE=true``): not trusted;
   ``GEMINI_CLI_TRUST_WORKSPACE=true``: trusted.
2. ``security.folderTrust.enabled`` false in the user's settings: every folder is trusted.
3. The trusted-folders file, ``$GEMINI_CLI_TRUSTED_FOLDERS_PATH`` or
   ``<home>/.gemini/trustedFolders.json`` (``<home>``: ``$GEMINI_CLI_HOME``, else the user's
   home): a JSON object (comments allowed) of ``path: TRUST_FOLDER | TRUST_PARENT |
   DO_NOT_TRUST``; the longest rule whose folder (a ``TRUST_PARENT`` rule's: the parent of its
   path) holds the project decides.
4. No rule: not trusted. An interactive run asks; a headless one (``gemini -p``) stops and
   suggests ``--skip-trust``, which runs without any of the project's hooks.

A user's own ``~/.gemini/settings.json`` hooks run in every folder, trusted or not. The
environment read here is the one this command runs in: the agent's may differ, so the answer
names where it came from. Used by ``extensions hook install gemini`` and ``extensions hook
check gemini``; never by a hook call.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, NamedTuple

__all__ = ["TRUST_ENV", "GeminiTrust", "gemini_trust", "trust_note"]

TRUST_ENV: Final = "GEMINI_CLI_TRUST_WORKSPACE"
"""The variable with which Gemini CLI trusts (``true``) or distrusts (``false``) any folder."""
_LEVELS: Final = frozenset({"TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"})
# Comments are stripped outside strings only, as Gemini CLI's strip-json-comments does.
_COMMENTS: Final = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)


class GeminiTrust(NamedTuple):
    """Whether Gemini CLI trusts the folder (``None``: no rule, so not yet), and why."""

    trusted: bool | None
    why: str


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("GEMINI_CLI_HOME") or Path.home())


def _read_json(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    return json.loads(_COMMENTS.sub(lambda match: match.group(1) or "", text))


def _normalized(path: str) -> str:
    absolute = os.path.abspath(path)
    return absolute.lower() if sys.platform in ("darwin", "win32") else absolute


def gemini_trust(project: Path, env: Mapping[str, str] | None = None) -> GeminiTrust:
    """Whether Gemini CLI, started in ``project`` with the environment ``env`` (default: this
    process's), trusts it (see the module for the rules)."""
    env = os.environ if env is None else env
    if env.get(TRUST_ENV) == "false" or env.get("GEMINI_RESTRICTED_MODE") == "true":
        return GeminiTrust(False, f"{TRUST_ENV}=false in this environment")
    if env.get(TRUST_ENV) == "true":
        return GeminiTrust(True, f"{TRUST_ENV}=true in this environment")
    settings = _home(env) / ".gemini" / "settings.json"
    try:
        folder_trust = _read_json(settings)
    except (OSError, ValueError):
        folder_trust = None
    if isinstance(folder_trust, dict):
        security = folder_trust.get("security")
        enabled = security.get("folderTrust", {}) if isinstance(security, dict) else {}
        if isinstance(enabled, dict) and enabled.get("enabled") is False:
            return GeminiTrust(True, f"folder trust is off in {settings}")
    rules_file = Path(env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or _home(env) / ".gemini" / "trustedFolders.json")
    try:
        rules = _read_json(rules_file)
    except FileNotFoundError:
        rules = {}
    except (OSError, ValueError) as exc:
        return GeminiTrust(False, f"{rules_file} cannot be read ({exc}), and Gemini CLI refuses to start then")
    if not isinstance(rules, dict):
        return GeminiTrust(False, f"{rules_file} is not a JSON object, and Gemini CLI refuses to start then")
    if any(level not in _LEVELS for level in rules.values()):
        return GeminiTrust(
            False,
            f"{rules_file} has a rule that is none of {', '.join(sorted(_LEVELS))}, "
            "and Gemini CLI refuses to start then",
        )
    # Rules are keyed by their absolute path (Gemini CLI's normalizePath), whose length ranks them.
    normalized = {_normalized(path): level for path, level in rules.items()}
    where = Path(os.path.realpath(project))
    best: tuple[int, str, str] | None = None
    for path, level in normalized.items():
        folder = Path(os.path.realpath(os.path.dirname(path) if level == "TRUST_PARENT" else path))
        if (folder == where or folder in where.parents) and (best is None or len(path) > best[0]):
            best = (len(path), path, level)
    if best is None:
        return GeminiTrust(None, f"no rule of {rules_file} covers it")
    _, path, level = best
    return GeminiTrust(level != "DO_NOT_TRUST", f"{path}: {level} in {rules_file}")


def trust_note(project: Path, trust: GeminiTrust) -> str:
    """The one line that says what Gemini CLI's trust means for the project's hooks, and the way
    for headless runs."""
    if trust.trusted:
        state = f"it trusts {project} ({trust.why}), but a run with --skip-trust runs none of them"
    else:
        state = (
            f"it does not trust {project} ({trust.why}), so it runs none of them until you trust it when it asks; "
            "a headless run (gemini -p) refuses to start, and with --skip-trust runs none of them"
        )
    return (
        f"Gemini CLI runs a project's hooks only in a folder it trusts: {state}; for headless runs, set "
        f"{TRUST_ENV}=true where Gemini CLI runs, or install the hooks with --user"
    )
