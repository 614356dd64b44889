"""``extensions hook install claude|gemini``: merge this project's hook entries into an agent's settings.

The settings file is the project's (``<root>/.claude/settings.json``,
``<root>/.gemini/settings.json``) or, with ``user``, the user's (``~/.claude/settings.json``,
``~/.gemini/settings.json``). For each event of the agent's table one group is added under
``hooks.<Event>``: ``{"matcher": ..., "hooks": [{"type": "command", "command": "extensions hook
AGENT EVENT", ...}]}`` (a matcher only for tool events: every tool, as the extensions' own
matchers choose among them). Everything else in the file is kept as it was read; an event that
already has our command is left alone, so installing twice changes nothing. A file that is not a
JSON object, or whose ``hooks`` is not shaped as the agent expects, is left untouched with an
error saying what is wrong. The file is replaced atomically, where it really is (a symlinked
settings file stays a link).

Before anything is read, :func:`check_settings_place` refuses a place the install should not
write: for a project, a ``.claude``/``.gemini`` folder or settings file that is a symlink leading
out of the project (a repository can ship one pointing at the user's own settings, or anywhere);
for either scope, a settings "file" that is not a regular file (a fifo would hang the read) and
a folder or file that belongs to another user. Between that check and the write, only a process
that can already write there could swap them.

It owns the entries and the merge; the agents' payloads are :mod:`.claude_hooks`' and
:mod:`.gemini_hooks`'.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from sdk_extension.wire.nesting import loads

from ..errors import ExtensionHostError
from .hook_adapter import HookAgent

__all__ = [
    "HOOK_COMMAND_TIMEOUT_SECONDS",
    "SettingsChange",
    "check_settings_place",
    "hook_command",
    "merge_hooks",
    "plan_install",
    "settings_path",
]

HOOK_COMMAND_TIMEOUT_SECONDS: Final = 60
"""The timeout written for each hook command (Gemini CLI takes it in milliseconds)."""
_TOOL_EVENTS: Final = frozenset({"PreToolUse", "PostToolUse", "BeforeTool", "AfterTool"})
_MATCH_ALL: Final = {"claude": "*", "gemini": ".*"}


def hook_command(agent: HookAgent, event: str) -> str:
    """The shell command an agent runs for ``event``."""
    return f"extensions hook {agent.name} {event}"


def settings_path(agent: HookAgent, project_root: Path, *, user: bool = False) -> Path:
    """The agent's settings file: the project's, or with ``user`` the user's."""
    base = Path.home() if user else project_root
    return base / agent.settings_folder / "settings.json"


def _entry(agent: HookAgent, event: str) -> dict[str, Any]:
    command: dict[str, Any] = {"type": "command", "command": hook_command(agent, event)}
    if agent.name == "gemini":
        command["name"] = f"extension-host {event}"
        command["timeout"] = HOOK_COMMAND_TIMEOUT_SECONDS * 1000
    else:
        command["timeout"] = HOOK_COMMAND_TIMEOUT_SECONDS
    group: dict[str, Any] = {"hooks": [command]}
    if event in _TOOL_EVENTS:
        group = {"matcher": _MATCH_ALL[agent.name], **group}
    return group


def merge_hooks(agent: HookAgent, settings: dict[str, Any], where: Path) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with the agent's hook entries added (a new dict), and the events added.

    Raises:
        ExtensionHostError: ``hooks`` or one of its events is not shaped as the agent expects.
    """
    merged = dict(settings)
    hooks = merged.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ExtensionHostError(f'{where}: "hooks" is not an object; fix it by hand, then install again')
    hooks = dict(hooks)
    added: list[str] = []
    for event in agent.events:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise ExtensionHostError(f'{where}: "hooks.{event}" is not a list; fix it by hand, then install again')
        if any(_has_command(group, hook_command(agent, event)) for group in groups):
            continue
        hooks[event] = [*groups, _entry(agent, event)]
        added.append(event)
    merged["hooks"] = hooks
    return merged, added


def _has_command(group: Any, command: str) -> bool:
    entries = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(entries, list) and any(isinstance(e, dict) and e.get("command") == command for e in entries)


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
    """What installing would do (or did) to ``path``: the events added and the unified diff."""

    path: Path
    added: tuple[str, ...]
    diff: str
    new_text: str
    target: Path
    """Where ``path`` really is (links resolved): the file :meth:`write` replaces."""

    @property
    def changed(self) -> bool:
        """Whether the file changes at all."""
        return bool(self.added)

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


def plan_install(agent: HookAgent, path: Path, project_root: Path | None = None) -> SettingsChange:
    """Read ``path`` (absent: empty settings) and merge the hook entries into it; with
    ``project_root``, the project's settings (see :func:`check_settings_place`).

    Raises:
        ExtensionHostError: the place may not be written (:func:`check_settings_place`), the file
            cannot be read, is not valid JSON, is not a JSON object, or its hooks are not shaped as
            the agent expects; the file is left as it is.
    """
    target = check_settings_place(path, project_root)
    try:
        old_text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        old_text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ExtensionHostError(f"cannot read {path}: {exc}") from exc
    try:
        settings = loads(old_text) if old_text.strip() else {}
    except ValueError as exc:  # nested too deeply included: a repository's file is anyone's
        raise ExtensionHostError(
            f"{path} is not valid JSON ({exc}); it was left as it is: fix it, then install again"
        ) from None
    if not isinstance(settings, dict):
        raise ExtensionHostError(f"{path} is not a JSON object; it was left as it is: fix it, then install again")
    merged, added = merge_hooks(agent, settings, path)
    new_text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n" if added else old_text
    diff = "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"{path} (before)" if old_text else "/dev/null",
            tofile=str(path),
        )
    )
    return SettingsChange(path, tuple(added), diff, new_text, target)
