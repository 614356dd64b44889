"""``extensions hook install claude|gemini``: merge this project's hook entries into an agent's settings.

The settings file is the project's (``<root>/.claude/settings.json``,
``<root>/.gemini/settings.json``) or, with ``user``, the user's (``~/.claude/settings.json``,
``~/.gemini/settings.json``). For each event of the agent's table one group is added under
``hooks.<Event>``: ``{"matcher": ..., "hooks": [{"type": "command", "command": "/…/bin/extensions
hook AGENT EVENT", ...}]}`` (a matcher only for tool events: every tool, as the extensions' own
matchers choose among them). The command names the ``extensions`` console script by its absolute
path, quoted for a shell: an agent whose ``PATH`` lacks it would otherwise take the failed
command as a non-blocking error (Claude Code: the call goes through unjudged) or block every
prompt (Gemini CLI); without such a script nothing is installed. Everything else in the file is
kept as it was read; an event that already has our command is left alone, so installing twice
changes nothing, and an entry of ours that runs ``extensions`` another way (bare, as older
versions wrote it, or by another path) is brought up to date in place. A file that is not a
JSON object, or whose ``hooks`` is not shaped as the agent expects, is left untouched with an
error saying what is wrong. The file is replaced atomically, where it really is (a symlinked
settings file stays a link).

Before anything is read, :func:`check_settings_place` refuses a place the install should not
write: for a project, a ``.claude``/``.gemini`` folder or settings file that is a symlink leading
out of the project (a repository can ship one pointing at the user's own settings, or anywhere);
for either scope, a settings "file" that is not a regular file (a fifo would hang the read) and
a folder or file that belongs to another user. Between that check and the write, only a process
that can already write there could swap them.

:func:`check_hooks` reads both settings files back (``extensions hook check``): which events have
an entry of ours, and what would keep the agent from running it. It owns the entries, the merge
and the check; the agents' payloads are :mod:`.claude`' and :mod:`.gemini`'.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import stat
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple

from extension_protocol.nesting import loads

from ...errors import ExtensionHostError
from ...project.private_files import NotRegularFile, open_regular
from .adapter import HookAgent

__all__ = [
    "COMMAND_NAME",
    "HOOK_COMMAND_TIMEOUT_SECONDS",
    "ScopeCheck",
    "SettingsChange",
    "check_hooks",
    "check_settings_place",
    "find_extensions_command",
    "hook_command",
    "merge_hooks",
    "plan_install",
    "settings_path",
]

HOOK_COMMAND_TIMEOUT_SECONDS: Final = 60
"""The timeout written for each hook command (Gemini CLI takes it in milliseconds)."""
COMMAND_NAME: Final = "extensions"
"""The console script the agents run (``[project.scripts]``)."""
_TOOL_EVENTS: Final = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"})
_MATCH_ALL: Final = {"claude": "*", "gemini": ".*"}


def find_extensions_command() -> Path:
    """The absolute path of this installation's ``extensions`` console script: the one running
    (``sys.argv[0]``), else the one in this interpreter's scripts folder, else in the user's.

    Raises:
        ExtensionHostError: none of them is an executable file; nothing is installed then.
    """
    places: list[Path] = []
    if sys.argv and Path(sys.argv[0]).name == COMMAND_NAME:
        places.append(Path(sys.argv[0]).absolute())  # not resolved: a link (pipx's) stays the way in
    for scheme in (sysconfig.get_default_scheme(), f"{os.name}_user"):
        try:
            places.append(Path(sysconfig.get_path("scripts", scheme)) / COMMAND_NAME)
        except KeyError:  # no user scheme on this platform
            continue
    for place in places:
        if place.is_file() and os.access(place, os.X_OK):
            return place
    looked = ", ".join(str(place.parent) for place in dict.fromkeys(places))
    raise ExtensionHostError(
        f"cannot find the {COMMAND_NAME} command of this Python ({sys.executable}) in {looked}; nothing was "
        f"installed: the agent would not find it either. Install extension-host into this Python with pip "
        f"(pip install extension-host), then run {COMMAND_NAME} hook install again"
    )


def hook_command(agent: HookAgent, event: str, program: Path) -> str:
    """The shell command an agent runs for ``event``: ``program`` (the ``extensions`` console
    script, by its absolute path, so the agent's ``PATH`` does not matter) quoted for a shell."""
    return f"{shlex.quote(str(program))} hook {agent.name} {event}"


def _is_ours(command: Any, agent: HookAgent, event: str) -> bool:
    """Whether ``command`` is an ``extensions hook AGENT EVENT`` entry, by any path (or none)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return len(words) == 4 and Path(words[0]).name == COMMAND_NAME and words[1:] == ["hook", agent.name, event]


def settings_path(agent: HookAgent, project_root: Path, *, user: bool = False) -> Path:
    """The agent's settings file: the project's, or with ``user`` the user's."""
    base = Path.home() if user else project_root
    return base / agent.settings_folder / "settings.json"


def _entry(agent: HookAgent, event: str, program: Path) -> dict[str, Any]:
    command: dict[str, Any] = {"type": "command", "command": hook_command(agent, event, program)}
    if agent.name == "gemini":
        command["name"] = f"extension-host {event}"
        command["timeout"] = HOOK_COMMAND_TIMEOUT_SECONDS * 1000
    else:
        command["timeout"] = HOOK_COMMAND_TIMEOUT_SECONDS
    group: dict[str, Any] = {"hooks": [command]}
    if event in _TOOL_EVENTS:
        group = {"matcher": _MATCH_ALL[agent.name], **group}
    return group


def merge_hooks(
    agent: HookAgent, settings: dict[str, Any], where: Path, program: Path
) -> tuple[dict[str, Any], list[str], list[str]]:
    """``settings`` with the agent's hook entries running ``program`` (a new dict), the events
    added, and the events whose entry ran another ``extensions`` (a bare one, or another path)
    and now runs ``program``.

    Raises:
        ExtensionHostError: ``hooks`` or one of its events is not shaped as the agent expects.
    """
    merged = dict(settings)
    hooks = merged.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ExtensionHostError(f'{where}: "hooks" is not an object; fix it by hand, then install again')
    hooks = dict(hooks)
    added: list[str] = []
    updated: list[str] = []
    for event in agent.events:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise ExtensionHostError(f'{where}: "hooks.{event}" is not a list; fix it by hand, then install again')
        wanted = hook_command(agent, event, program)
        ours = _our_entries(groups, agent, event)
        if not ours:
            hooks[event] = [*groups, _entry(agent, event, program)]
            added.append(event)
        elif any(entry["command"] != wanted for entry in ours):
            hooks[event] = [_with_command(group, agent, event, wanted) for group in groups]
            updated.append(event)
    merged["hooks"] = hooks
    return merged, added, updated


def _our_entries(groups: Any, agent: HookAgent, event: str) -> list[dict[str, Any]]:
    """The command entries among ``groups`` (one event's list, if it is one) that run
    ``extensions hook AGENT EVENT``, by any path."""
    if not isinstance(groups, list):
        return []
    return [entry for group in groups for entry in _entries(group) if _is_ours(entry.get("command"), agent, event)]


def _entries(group: Any) -> list[dict[str, Any]]:
    entries = group.get("hooks") if isinstance(group, dict) else None
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def _with_command(group: Any, agent: HookAgent, event: str, command: str) -> Any:
    """``group`` (a copy) with each of our entries for ``event`` running ``command``."""
    if not _entries(group):
        return group
    return {
        **group,
        "hooks": [
            {**entry, "command": command}
            if isinstance(entry, dict) and _is_ours(entry.get("command"), agent, event)
            else entry
            for entry in group["hooks"]
        ],
    }


class ScopeCheck(NamedTuple):
    """What one settings file holds of this project's hooks: the events with an entry of ours,
    and what keeps them from running (each problem one line, with its fix)."""

    scope: str
    """``project`` or ``user``."""
    path: Path
    events: tuple[str, ...]
    problems: tuple[str, ...]


def check_hooks(agent: HookAgent, project_root: Path) -> list[ScopeCheck]:
    """The project's and the user's settings of ``agent``, each checked for entries of ours
    (only those that have one), and whether the agent can run them: every event there, a
    command it finds whatever its ``PATH``, and for Gemini CLI's project settings a folder it
    trusts (:mod:`.gemini_trust`). Reads only, and only regular files: one that cannot be read, or
    is none (a fifo), is a problem."""
    found: list[ScopeCheck] = []
    for scope in ("project", "user"):
        path = settings_path(agent, project_root, user=scope == "user")
        again = f"run extensions hook install {agent.name}{' --user' if scope == 'user' else ''} again"
        try:
            text = _settings_text(path)
            if text is None:
                continue
            settings = loads(text)
        except (ExtensionHostError, ValueError) as exc:
            found.append(ScopeCheck(scope, path, (), (f"cannot be read ({exc}): fix it, then {again}",)))
            continue
        hooks = settings.get("hooks") if isinstance(settings, dict) else None
        hooks = hooks if isinstance(hooks, dict) else {}
        commands: dict[str, list[str]] = {}
        for event in agent.events:
            groups = hooks.get(event)
            commands[event] = [entry["command"] for entry in _our_entries(groups, agent, event)]
        events = tuple(event for event, found_commands in commands.items() if found_commands)
        if not events:
            continue
        problems: list[str] = []
        missing = [event for event in agent.events if event not in events]
        if missing:
            problems.append(f"no entry for {', '.join(missing)}: {again}")
        programs = {shlex.split(command)[0] for found_commands in commands.values() for command in found_commands}
        for program in sorted(programs):
            if os.sep not in program:
                problems.append(
                    f"runs a bare {program!r}, which the agent finds only on its own PATH (without it, Claude Code "
                    f"lets every call through unjudged and Gemini CLI blocks every prompt): {again}"
                )
            elif not (os.path.isfile(program) and os.access(program, os.X_OK)):
                problems.append(f"runs {program}, which is not an executable file: {again}")
        if agent.name == "gemini" and scope == "project":
            from .gemini_trust import gemini_trust, trust_note

            trust = gemini_trust(project_root)
            if not trust.trusted:
                problems.append(trust_note(project_root, trust))
        found.append(ScopeCheck(scope, path, events, tuple(problems)))
    return found


def _settings_text(path: Path) -> str | None:
    """The text of the settings file ``path``, ``None`` when there is none; read only once it is
    known to be a regular file (a fifo would hang the read).

    Raises:
        ExtensionHostError: it is not a regular file, or cannot be read.
    """
    try:
        with open_regular(path) as (handle, _info):
            data = handle.read()
    except FileNotFoundError:
        return None
    except NotRegularFile:
        raise ExtensionHostError(f"{path} is not a regular file") from None
    except OSError as exc:
        raise ExtensionHostError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExtensionHostError(f"cannot read {path}: {exc}") from None


def check_settings_place(path: Path, project_root: Path | None = None) -> Path:
    """Where ``path`` really is (links resolved), if installing may write it (see the module);
    ``project_root`` for a project's settings, ``None`` for the user's.

    Raises:
        ExtensionHostError: one line naming the link and its target, or the file or folder and
            what is wrong with it.
    """
    real = Path(os.path.realpath(path))
    if project_root is not None:
        root = Path(os.path.realpath(project_root))
        if root not in real.parents:
            link = next((place for place in (path.parent, path) if place.is_symlink()), path)
            raise ExtensionHostError(
                f"{link} is a symlink to {os.path.realpath(link)}, outside the project {root}; nothing was "
                "installed: remove the link, or install into your own settings with --user"
            )
    for place, wanted in ((real.parent, stat.S_ISDIR), (real, stat.S_ISREG)):
        try:
            info = os.stat(place)
        except FileNotFoundError:
            continue
        if not wanted(info.st_mode):
            kind = "a folder" if wanted is stat.S_ISDIR else "a regular file"
            raise ExtensionHostError(f"{place} is not {kind}; nothing was installed: move it away, then install again")
        if info.st_uid != os.geteuid():
            raise ExtensionHostError(
                f"{place} belongs to uid {info.st_uid}, not you; nothing was installed: "
                "check it, then take it over or remove it"
            )
    return real


@dataclass(frozen=True)
class SettingsChange:
    """What installing would do (or did) to ``path``: the events added, those whose entry now
    runs this ``extensions`` (``updated``), and the unified diff."""

    path: Path
    added: tuple[str, ...]
    updated: tuple[str, ...]
    diff: str
    new_text: str
    target: Path
    """Where ``path`` really is (links resolved): the file :meth:`write` replaces."""

    @property
    def changed(self) -> bool:
        """Whether the file changes at all."""
        return bool(self.added or self.updated)

    def write(self) -> None:
        """Replace the file with the merged settings (atomically; its mode kept)."""
        self.target.parent.mkdir(parents=True, exist_ok=True)
        mode = self.target.stat().st_mode & 0o7777 if self.target.exists() else 0o644
        handle, temporary = tempfile.mkstemp(dir=self.target.parent, prefix=".settings-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(self.new_text)
            os.chmod(temporary, mode)
            os.replace(temporary, self.target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def plan_install(agent: HookAgent, path: Path, program: Path, project_root: Path | None = None) -> SettingsChange:
    """Read ``path`` (absent: empty settings) and merge the hook entries running ``program`` (the
    ``extensions`` console script, :func:`find_extensions_command`) into it; with
    ``project_root``, the project's settings (see :func:`check_settings_place`).

    Raises:
        ExtensionHostError: the place may not be written (:func:`check_settings_place`), the file
            cannot be read, is not valid JSON, is not a JSON object, or its hooks are not shaped as
            the agent expects; the file is left as it is.
    """
    target = check_settings_place(path, project_root)
    old_text = _settings_text(target) or ""
    try:
        settings = loads(old_text) if old_text.strip() else {}
    except ValueError as exc:  # nested too deeply included: a repository's file is anyone's
        raise ExtensionHostError(
            f"{path} is not valid JSON ({exc}); it was left as it is: fix it, then install again"
        ) from None
    if not isinstance(settings, dict):
        raise ExtensionHostError(f"{path} is not a JSON object; it was left as it is: fix it, then install again")
    merged, added, updated = merge_hooks(agent, settings, path, program)
    new_text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n" if added or updated else old_text
    diff = "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"{path} (before)" if old_text else "/dev/null",
            tofile=str(path),
        )
    )
    return SettingsChange(path, tuple(added), tuple(updated), diff, new_text, target)
