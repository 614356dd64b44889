"""The git state of a working tree as a JSON-ready dict: branch, upstream, file counts, diff stats.

Everything here takes a repository path and runs ``git`` itself, so it can be imported and
tested without an extension host. :func:`collect_git_stats` is the entry point; it raises
:class:`GitStatsError` with a message meant for the model when git cannot answer.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "DEFAULT_TIMEOUT",
    "GIT_ENVIRONMENT",
    "NEUTRALISED_SETTINGS",
    "FileChange",
    "GitStatsError",
    "NumStat",
    "StatusReport",
    "collect_git_stats",
    "git_argv",
    "git_environment",
    "parse_numstat",
    "parse_status",
]

DEFAULT_TIMEOUT: Final = 10.0
"""Seconds all git commands of one report may take together."""

_STATUS_WORDS: Final = {
    "M": "modified",
    "T": "type_changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "unmerged",
}

# Unquoted paths in UTF-8 whatever the user's config says; -z already disables quoting for
# the machine formats, quotepath=off keeps any path git echoes in an error message readable.
_GIT_CONFIG: Final = ("-c", "core.quotepath=off", "-c", "color.ui=never")

# A repository's own configuration (its .git/config and whatever that includes) is written by
# whoever made the repository, and some of its settings name programs git starts by itself:
# core.fsmonitor runs on status and diff, hooks when the index is written, a pager, an external
# diff, a textconv or a filter's clean program when a file is compared, a credential helper or
# an ssh command when a partial clone fetches a missing object. A copy of this extension in the
# user's home runs in every project, untrusted ones included, so every git call switches them
# off: these settings on the command line (which outranks every configuration file, and which
# git hands on to the git processes it starts), --no-pager and --no-optional-locks, diff's
# --no-ext-diff and --no-textconv, the clean and process programs of every filter the
# repository itself defines emptied, submodules not entered (each has a configuration of its
# own), and no GIT_* variable inherited (one could name another repository, a configuration or
# a program). The host runs its own git calls the same way: NEUTRALISED_SETTINGS and
# GIT_ENVIRONMENT in extension_host/launch/git.py (this file cannot import the host; a test checks
# that nothing there is missing here).
NEUTRALISED_SETTINGS: Final = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("safe.bareRepository", "explicit"),
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    ("credential.helper", ""),
    ("core.askPass", ""),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("gpg.program", "false"),
)
"""Settings every git command gets with ``-c``, over whatever the repository says."""
GIT_ENVIRONMENT: Final = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
}
"""Variables every git command gets, once every inherited ``GIT_*`` variable is dropped."""
_GIT_OPTIONS: Final = ("--no-pager", "--no-optional-locks")
_SUBMODULES: Final = "--ignore-submodules=dirty"
"""Submodules count by their commit only: git does not go into them to look for changes."""
_NUMSTAT: Final = ("diff", "--numstat", "-z", "--no-ext-diff", "--no-textconv", "--no-color", _SUBMODULES)
_FILTER_PROGRAMS: Final = ("clean", "smudge", "process")
_OWN_SCOPES: Final = frozenset({"local", "worktree"})
"""Where a repository's own configuration lives (the user's global and the system's are theirs)."""


class GitStatsError(Exception):
    """git could not report on the folder; the message says why, in words for the model."""


@dataclass(frozen=True, slots=True)
class NumStat:
    """Lines added and removed in one file; ``None`` counts mean git saw a binary file."""

    added: int | None
    removed: int | None
    old_path: str | None = None

    @property
    def binary(self) -> bool:
        """True when git reported ``-`` instead of line counts."""
        return self.added is None


@dataclass(slots=True)
class FileChange:
    """One path from ``git status``: its index (staged) and work-tree (unstaged) states."""

    path: str
    kind: str
    """``tracked``, ``untracked`` or ``conflicted``."""
    staged: str | None = None
    unstaged: str | None = None
    old_path: str | None = None


@dataclass(slots=True)
class StatusReport:
    """What ``git status --porcelain=v2 --branch`` says, parsed."""

    head_oid: str | None = None
    branch: str | None = None
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    files: list[FileChange] = field(default_factory=list)


def parse_status(output: str) -> StatusReport:
    """Parse the output of ``git status --porcelain=v2 --branch -z``.

    Raises:
        GitStatsError: a record does not have the shape porcelain v2 promises.
    """
    report = StatusReport()
    fields = iter(output.split("\0"))
    for record in fields:
        if not record:
            continue
        if record.startswith("# "):
            _read_header(report, record)
        elif record.startswith("1 "):
            parts = _split(record, 8)
            report.files.append(_tracked(parts[1], parts[8]))
        elif record.startswith("2 "):
            parts = _split(record, 9)
            change = _tracked(parts[1], parts[9])
            # With -z the rename source is the next NUL-separated field, not a tab-joined one.
            change.old_path = next(fields, None)
            report.files.append(change)
        elif record.startswith("u "):
            parts = _split(record, 10)
            report.files.append(FileChange(parts[10], "conflicted", staged="unmerged", unstaged="unmerged"))
        elif record.startswith("? "):
            report.files.append(FileChange(record[2:], "untracked"))
        # "!" records (ignored files) only appear with --ignored, which is never asked for.
    return report


def parse_numstat(output: str) -> dict[str, NumStat]:
    """Parse ``git diff --numstat -z`` into stats by (new) path.

    Raises:
        GitStatsError: a record is not ``added<TAB>removed<TAB>path``.
    """
    stats: dict[str, NumStat] = {}
    fields = iter(output.split("\0"))
    for record in fields:
        if not record:
            continue
        try:
            added, removed, path = record.split("\t", 2)
        except ValueError:
            raise GitStatsError(f"unexpected line in git diff --numstat output: {record!r}") from None
        old_path = None
        if not path:
            # A rename or copy: "a<TAB>r<TAB>" is followed by the old and the new path.
            old_path, path = next(fields, ""), next(fields, "")
        stats[path] = NumStat(_count(added), _count(removed), old_path)
    return stats


def collect_git_stats(
    repo: str | Path,
    *,
    include_files: bool = True,
    max_files: int = 50,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """Report the git state of the work tree containing ``repo`` as a JSON-ready dict.

    Keys: ``repo_root``, ``branch`` (``None`` when detached), ``detached``, ``head`` (short
    sha, ``None`` before the first commit), ``upstream`` and, when there is one, ``ahead`` /
    ``behind``; ``counts`` of staged, unstaged, untracked and conflicted files; ``totals`` of
    lines added/removed and binary files, staged and unstaged separately; and, when
    ``include_files``, ``files`` (at most ``max_files``, sorted by path) with
    ``files_omitted`` saying how many more there were.

    Raises:
        GitStatsError: git is missing, ``repo`` is not in a work tree, or git timed out or failed.
    """
    runner = _GitRunner(timeout)
    root = runner.run(Path(repo), "rev-parse", "--show-toplevel").rstrip("\n")
    if not root:
        raise GitStatsError(f"{repo} is not inside a git work tree")
    top = Path(root)
    runner.neutralise_filters(top)
    status = parse_status(
        runner.run(top, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", _SUBMODULES)
    )
    conflicted = {change.path for change in status.files if change.kind == "conflicted"}
    # Conflicted paths show up in numstat as several half-meaningful rows; their line counts
    # are left out rather than reported wrong.
    staged_stats = _without(parse_numstat(runner.run(top, *_NUMSTAT, "--cached")), conflicted)
    unstaged_stats = _without(parse_numstat(runner.run(top, *_NUMSTAT)), conflicted)
    head = runner.run(top, "rev-parse", "--short", "HEAD").strip() if status.head_oid else None

    report: dict[str, Any] = {
        "repo_root": str(top),
        "branch": status.branch,
        "detached": status.branch is None,
        "head": head,
        "upstream": status.upstream,
    }
    if status.upstream is not None:
        # None here means the upstream is configured but its branch is gone.
        report["ahead"] = status.ahead
        report["behind"] = status.behind
    report["counts"] = {
        "staged": sum(1 for c in status.files if c.kind == "tracked" and c.staged),
        "unstaged": sum(1 for c in status.files if c.kind == "tracked" and c.unstaged),
        "untracked": sum(1 for c in status.files if c.kind == "untracked"),
        "conflicted": len(conflicted),
    }
    report["totals"] = {
        "staged": _totals(staged_stats.values()),
        "unstaged": _totals(unstaged_stats.values()),
    }
    if include_files:
        limit = max(0, max_files)
        changes = sorted(status.files, key=lambda change: change.path)
        report["files"] = [
            _file_entry(change, staged_stats.get(change.path), unstaged_stats.get(change.path))
            for change in changes[:limit]
        ]
        report["files_omitted"] = max(0, len(changes) - limit)
    return report


# -- running git ---------------------------------------------------------------------------


def git_argv(*args: str, filters: Sequence[str] = ()) -> list[str]:
    """The argv of ``git args...`` with everything a repository could make git run switched off
    (see :data:`NEUTRALISED_SETTINGS`); ``filters`` are the ``-c`` arguments that empty the
    repository's own filter programs."""
    argv = ["git", *_GIT_OPTIONS, *_GIT_CONFIG]
    for name, value in NEUTRALISED_SETTINGS:
        argv += ["-c", f"{name}={value}"]
    return [*argv, *filters, *args]


def git_environment() -> dict[str, str]:
    """This process's environment without a ``GIT_*`` variable, with :data:`GIT_ENVIRONMENT`."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env.update(GIT_ENVIRONMENT)
    env["LC_ALL"] = "C"
    return env


class _GitRunner:
    """Runs git commands against one deadline, turning every failure into a GitStatsError."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._deadline = time.monotonic() + timeout
        self._filters: list[str] = []

    def neutralise_filters(self, top: Path) -> None:
        """Empty, for the commands that follow, the programs of every filter the repository at
        ``top`` defines itself (``.gitattributes`` picks a filter by name, and status and diff
        run its clean program on the files they compare); the user's own filters (git-lfs's, in
        the global configuration) stay."""
        listed = self.run(top, "config", "--show-scope", "--name-only", "-z", "--get-regexp", r"^filter\.", ok=(0, 1))
        records = listed.split("\0")
        # filter.<name>.<program>: the name is everything between the first dot and the last.
        keys = [key for scope, key in zip(records[::2], records[1::2], strict=False) if scope in _OWN_SCOPES]
        names = {key[key.index(".") + 1 : key.rindex(".")] for key in keys if key.count(".") >= 2}
        for name in sorted(names):
            if "=" in name:  # -c would cut the setting's name there
                raise GitStatsError(
                    f"the repository's configuration defines a filter named {name!r}, whose programs "
                    "cannot be switched off; git_stats does not run git there"
                )
            for program in _FILTER_PROGRAMS:
                self._filters += ["-c", f"filter.{name}.{program}="]
            self._filters += ["-c", f"filter.{name}.required=false"]

    def run(self, cwd: Path, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise GitStatsError(f"git took longer than {self._timeout:g} s; the repository may be very large")
        try:
            completed = subprocess.run(
                git_argv(*args, filters=self._filters),
                cwd=cwd,
                env=git_environment(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=remaining,
                check=False,
            )
        except FileNotFoundError as exc:
            if not cwd.is_dir():
                raise GitStatsError(f"{cwd} is not a directory") from None
            raise GitStatsError(f"git is not installed or not on PATH ({exc.strerror})") from None
        except NotADirectoryError:
            raise GitStatsError(f"{cwd} is not a directory") from None
        except subprocess.TimeoutExpired:
            raise GitStatsError(
                f"'git {args[0]}' did not finish within {self._timeout:g} s; the repository may be very large"
            ) from None
        except OSError as exc:
            raise GitStatsError(f"could not run git: {exc}") from None
        if completed.returncode not in ok:
            raise GitStatsError(_explain_failure(cwd, args, completed.stderr))
        return completed.stdout.decode("utf-8", errors="surrogateescape")


def _explain_failure(cwd: Path, args: Sequence[str], stderr: bytes) -> str:
    message = stderr.decode("utf-8", errors="replace").strip()
    if "not a git repository" in message:
        return f"{cwd} is not inside a git repository"
    if "must be run in a work tree" in message:
        return f"{cwd} is inside a bare git repository, which has no work tree to report on"
    if "dubious ownership" in message:
        return f"git refuses to read {cwd}: {message.splitlines()[0]} (see 'git config safe.directory')"
    first_line = message.splitlines()[0] if message else "no error message"
    return f"'git {args[0]}' failed in {cwd}: {first_line}"


# -- parsing helpers -----------------------------------------------------------------------


def _split(record: str, path_index: int) -> list[str]:
    # The path is the last field and may itself contain spaces, so split only up to it.
    parts = record.split(" ", path_index)
    if len(parts) != path_index + 1:
        raise GitStatsError(f"unexpected record in git status output: {record!r}")
    return parts


def _read_header(report: StatusReport, record: str) -> None:
    key, _, value = record[2:].partition(" ")
    if key == "branch.oid":
        report.head_oid = None if value == "(initial)" else value
    elif key == "branch.head":
        report.branch = None if value == "(detached)" else value
    elif key == "branch.upstream":
        report.upstream = value
    elif key == "branch.ab":
        ahead, _, behind = value.partition(" ")
        report.ahead, report.behind = abs(int(ahead)), abs(int(behind))


def _tracked(xy: str, path: str) -> FileChange:
    if len(xy) != 2:
        raise GitStatsError(f"unexpected status code {xy!r} in git status output")
    return FileChange(path, "tracked", staged=_STATUS_WORDS.get(xy[0]), unstaged=_STATUS_WORDS.get(xy[1]))


def _count(text: str) -> int | None:
    if text == "-":
        return None
    try:
        return int(text)
    except ValueError:
        raise GitStatsError(f"unexpected count {text!r} in git diff --numstat output") from None


def _without(stats: dict[str, NumStat], paths: set[str]) -> dict[str, NumStat]:
    return {path: stat for path, stat in stats.items() if path not in paths}


def _totals(stats: Iterable[NumStat]) -> dict[str, int]:
    added = removed = binary = files = 0
    for stat in stats:
        files += 1
        if stat.binary:
            binary += 1
        else:
            added += stat.added or 0
            removed += stat.removed or 0
    return {"files": files, "added": added, "removed": removed, "binary_files": binary}


def _side(state: str | None, stat: NumStat | None) -> dict[str, Any] | None:
    if state is None and stat is None:
        return None
    side: dict[str, Any] = {"status": state}
    if stat is not None:
        if stat.binary:
            side["binary"] = True
        else:
            side["added"] = stat.added
            side["removed"] = stat.removed
    return side


def _file_entry(change: FileChange, staged: NumStat | None, unstaged: NumStat | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": change.path, "kind": change.kind}
    if change.old_path is not None:
        entry["old_path"] = change.old_path
    if change.kind == "tracked":
        entry["staged"] = _side(change.staged, staged)
        entry["unstaged"] = _side(change.unstaged, unstaged)
    elif change.kind == "conflicted":
        entry["staged"] = entry["unstaged"] = None
    return entry
