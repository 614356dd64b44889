"""GitHub Copilot CLI: the ``extension.mjs`` that makes Copilot run a Python extension.

Copilot CLI only starts JavaScript entry files, with Node.js, with stdin and stdout as the
extension protocol's pipe and ``SESSION_ID`` / ``COPILOT_EXTENSION_PARENT_PID`` set. The launcher
written here starts this project's Python SDK launcher (``python -P -m sdk_extension
extension.py``, as this host starts Python extensions) with all three standard streams passed
through, so the Python extension joins Copilot's session itself, speaking the same protocol
version, and forwards Copilot's environment. The Python process leads a process group of its own,
as under this host: the launcher passes SIGTERM, SIGINT and SIGHUP on to that group and ends as
the Python process ended (its exit code, or the same signal); the Python launcher watches the
launcher's pid, so it and its group go when the launcher is killed outright.

Which Python runs it: ``$EXTENSION_HOST_PYTHON`` when set where Copilot runs, else the
interpreter that ran the export (recorded in the file). A missing or unusable interpreter is
one line on stderr (Copilot keeps it in the extension's log) and exit 127.

The file's first line is :data:`~extension_host.project.discovery.COPILOT_LAUNCHER_MARKER`, by which
this host's discovery knows it runs the ``extension.py`` beside it. This module writes the file;
it never runs it and knows nothing of the protocol.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..errors import ExtensionHostError
from ..launch.interpreter import python_args
from ..project.discovery import COPILOT_LAUNCHER_MARKER, ENTRY_FILE, ENTRY_FILES, ExtensionSpec, is_copilot_launcher

__all__ = [
    "COPILOT_SWITCHES",
    "LAUNCHER_FILE",
    "PYTHON_ENV",
    "CopilotExport",
    "CopilotExportError",
    "ExportAction",
    "export_copilot",
    "launcher_text",
]

LAUNCHER_FILE: Final = "extension.mjs"
"""The entry file Copilot CLI runs (the only JavaScript form every Copilot version discovers)."""
PYTHON_ENV: Final = "EXTENSION_HOST_PYTHON"
"""Set where Copilot runs to choose the Python interpreter over the one recorded in the launcher."""
COPILOT_SWITCHES: Final = (
    "Copilot CLI runs extensions only with COPILOT_CLI_ENABLED_FEATURE_FLAGS=EXTENSIONS (or --experimental), "
    "and in a prompt run (-p) only with GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS=true as well"
)
"""What Copilot CLI (1.0.102) needs before it starts any extension: without it, none runs and
nothing says so."""
MISSING_PYTHON_EXIT: Final = 127
"""The launcher's exit code when it cannot start Python (the shell's 'command not found')."""

ExportAction = Literal["created", "updated", "unchanged", "replaced"]
"""``created`` (no launcher before), ``updated`` (an older generated one), ``unchanged`` (the same
file was there), ``replaced`` (a hand-written ``extension.mjs``, overwritten with ``--force``)."""

_PYTHON_PLACEHOLDER: Final = "__RECORDED_PYTHON__"
_ARGS_PLACEHOLDER: Final = "__LAUNCHER_ARGS__"

# Plain JavaScript, no imports beyond Node's own: it must run under Copilot's Node as it is.
_TEMPLATE: Final = (
    COPILOT_LAUNCHER_MARKER
    + """
// Do not edit: run `extensions export copilot NAME` again to regenerate it.
// GitHub Copilot CLI runs this file with Node.js; it starts the Python extension beside it with
// extension-host's launcher (python -P -m sdk_extension extension.py). stdin and stdout carry the
// extension protocol and pass straight through, so the Python extension joins Copilot's session
// itself. The Python it runs: $EXTENSION_HOST_PYTHON if set, else the one recorded below.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RECORDED_PYTHON = __RECORDED_PYTHON__;
const LAUNCHER_ARGS = __LAUNCHER_ARGS__; // isolated: nothing is imported from the folder Copilot runs it in
const python = process.env.EXTENSION_HOST_PYTHON || RECORDED_PYTHON;
const folder = dirname(fileURLToPath(import.meta.url));
const entry = join(folder, "extension.py");
const name = basename(folder);

function fail(message) {
  process.stderr.write(`extension ${name}: ${message}\\n`);
  process.exit(127);
}

if (!existsSync(entry)) {
  fail(`${entry} is missing; this file only starts the Python extension beside it`);
}

const env = { ...process.env, EXTENSION_HOST_PARENT_PID: String(process.pid) };
// Descriptors this process was given are not passed on: their numbers would mean nothing there.
delete env.EXTENSION_HOST_LIFELINE_FD;
delete env.NODE_CHANNEL_FD;
delete env.NODE_CHANNEL_SERIALIZATION_MODE;

// Its own process group, as this host starts extensions: a stop reaches what it started too, and
// the Python launcher ends that group by itself once this process is gone (SIGKILL included).
const child = spawn(python, [...LAUNCHER_ARGS, entry], { stdio: "inherit", env, detached: true });
child.on("error", (error) => {
  fail(
    `cannot run Python ${python} (${error.code ?? error.message}); set EXTENSION_HOST_PYTHON ` +
      `to a Python 3.11+ that has extension-host installed, or run "extensions export copilot ${name}" ` +
      "again with one"
  );
});

const forwarded = ["SIGTERM", "SIGINT", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  });
}

child.on("exit", (code, signal) => {
  if (signal !== null) {
    // End the way the Python process ended, so that Copilot sees the same.
    for (const each of forwarded) process.removeAllListeners(each);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
"""
)


class CopilotExportError(ExtensionHostError):
    """The launcher cannot be written; the message names the extension or file and what to do."""


@dataclass(frozen=True, slots=True)
class CopilotExport:
    """What ``export_copilot`` did."""

    extension: str
    """The extension's id (``project:NAME``, ``user:NAME``)."""
    path: Path
    """The launcher: ``extension.mjs`` beside the extension's ``extension.py``."""
    python: str
    """The interpreter recorded in it."""
    action: ExportAction

    def to_json(self) -> dict[str, str]:
        """The ``--json`` form."""
        return {
            "extension": self.extension,
            "path": str(self.path),
            "entry": str(self.path.parent / ENTRY_FILE),
            "python": self.python,
            "python_env": PYTHON_ENV,
            "action": self.action,
        }


def launcher_text(python: str) -> str:
    """The launcher's whole text, recording ``python`` (an absolute path) as the interpreter."""
    # JSON is valid JavaScript here (ASCII only, every quote escaped).
    launcher_args = json.dumps(python_args("-m", "sdk_extension"))
    return _TEMPLATE.replace(_PYTHON_PLACEHOLDER, json.dumps(python)).replace(_ARGS_PLACEHOLDER, launcher_args)


def export_copilot(spec: ExtensionSpec, python: str, *, force: bool = False) -> CopilotExport:
    """Write the Copilot CLI launcher for the Python extension ``spec``, recording ``python``.

    A launcher this project generated is brought up to date; any other ``extension.mjs`` is
    replaced only with ``force``.

    Raises:
        CopilotExportError: ``spec`` is not a Python extension, ``python`` is not an absolute
            path, the folder holds another JavaScript entry file, an ``extension.mjs`` that was
            not generated is there (without ``force``), or the file cannot be written.
    """
    if spec.runtime != "python":
        raise CopilotExportError(
            f"{spec.id} is a JavaScript extension ({spec.entry_name}): Copilot CLI runs it as it is, nothing to export"
        )
    if not os.path.isabs(python):
        raise CopilotExportError(f"the Python interpreter {python!r} is not an absolute path; pass the full path")
    others = [name for name, runtime in ENTRY_FILES.items() if runtime == "node" and name != LAUNCHER_FILE]
    present = [name for name in others if (spec.folder / name).exists()]
    if present:
        raise CopilotExportError(
            f"{spec.id} also has {', '.join(present)}; remove it, so that Copilot CLI runs the Python extension"
        )
    target = spec.folder / LAUNCHER_FILE
    text = launcher_text(python)
    action: ExportAction = "created"
    if target.exists() or target.is_symlink():
        try:
            current = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current == text:
            return CopilotExport(spec.id, target, python, "unchanged")
        if is_copilot_launcher(target):
            action = "updated"
        elif not force:
            raise CopilotExportError(
                f"{target} exists and was not generated by extension-host; "
                "move it away, or pass --force to overwrite it"
            )
        else:
            action = "replaced"
    _write(target, text)
    return CopilotExport(spec.id, target, python, action)


def _write(target: Path, text: str) -> None:
    # Written whole, then renamed over the old file: Copilot (or this host's watcher) never
    # reads half a launcher.
    try:
        handle, temp = tempfile.mkstemp(prefix=".extension-", suffix=".mjs.tmp", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.chmod(temp, 0o644)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CopilotExportError(f"cannot write {target}: {exc.strerror or exc}") from None
