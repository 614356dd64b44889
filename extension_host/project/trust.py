"""The user's trust decisions: which projects may run their extensions, and which sensitive
environment variables the user granted to which extension.

A project's extensions are code from a repository someone cloned. None of it runs until the
user trusts the project: ``extensions trust``, ``extensions scaffold`` in it (creating your own
code is consent), a yes to ``extensions dev``'s question, or, for one process only,
``EXTENSION_HOST_TRUST_PROJECT=1``. An embedding application may decide instead. Trust is given
to the project's real path and covers later edits and new extension folders of it, as workspace
trust does in editors. User-scope extensions are the user's own and always trusted. Part of
the trust decision, and ended by the next one, is whether the agents' guarded calls go through
while one of the project's extensions cannot run (``extensions trust --allow-failed-guards``).

Both kinds of decision live in one file, ``<home>/trust.json``, so a different home is a
different set of decisions. It is read through pydantic (a damaged file is an error that names
it, and counts as "not trusted"), refused if another user could have written it or if it is
not a regular file (a fifo in its place is never waited on), and written atomically (a
temporary file renamed into place, mode 0600) under an advisory lock, so two commands at once
lose nothing (:mod:`.records`). This module owns that file and the trust rule; it does not know processes,
discovery or the command line.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import TrustFileError
from .records import PrivateRecord

__all__ = [
    "TRUST_ENV",
    "TRUST_FILE",
    "TrustDecision",
    "TrustStore",
    "decide_project_trust",
    "project_key",
    "untrusted_reason",
]

TRUST_ENV: Final = "EXTENSION_HOST_TRUST_PROJECT"
"""Set to ``1`` to trust the current project for this process only (CI, scripts)."""
TRUST_FILE: Final = "trust.json"
_LOCK_FILE: Final = ".trust.lock"
_VERSION: Final = 1
_REDO: Final = "remove it and decide again (extensions trust, extensions grant)"
"""The way out of a record that cannot be used: every decision in it is made again."""

_GrantChange = Callable[[set[str]], set[str]]


class _Project(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    trusted: bool = False
    decided_at: str | None = None
    allow_failed_guards: bool = False
    """Let the agents' calls through while one of the extensions cannot run (the hook command
    blocks them otherwise); part of the trust decision, so trusting again without it ends it."""
    grants: dict[str, list[str]] = Field(default_factory=dict)
    """Extension name → the variables granted to that project extension."""


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    version: int = _VERSION
    projects: dict[str, _Project] = Field(default_factory=dict)
    """A project's real path → what the user decided for it."""
    user_grants: dict[str, list[str]] = Field(default_factory=dict)
    """User extension name (another source's: its id) → the variables granted to it (in every project)."""


@dataclass(frozen=True, slots=True)
class TrustDecision:
    """Whether a project's extensions may run, and who said so."""

    trusted: bool
    source: Literal["application", "environment", "record", "none"]
    """``application`` (the embedding application's ``trust=``), ``environment``
    (:data:`TRUST_ENV`), ``record`` (the trust file) or ``none`` (nobody trusted it)."""
    problem: str | None = None
    """Why the record could not be read, if it could not (the project then counts as untrusted)."""

    @property
    def withheld(self) -> str | None:
        """Why the project's extensions do not run (:func:`untrusted_reason`); ``None`` when they may."""
        return None if self.trusted else untrusted_reason(self.problem)


def untrusted_reason(problem: str | None = None) -> str:
    """The one line shown for a project extension that does not run for lack of trust."""
    if problem is not None:
        return f"not run: the trust record cannot be read ({problem})"
    return "not run: this project is not trusted; review its .github/extensions, then run 'extensions trust'"


def project_key(root: Path) -> str:
    """How a project is recorded: its real path (links resolved)."""
    return str(Path(root).resolve())


class TrustStore:
    """The trust file of one user home."""

    def __init__(self, home: Path) -> None:
        self.home: Final = home
        self.path: Final = home / TRUST_FILE
        self._record = PrivateRecord(
            self.path, _Document, version=_VERSION, error=TrustFileError, redo=_REDO, lock=_LOCK_FILE
        )

    # -- projects -------------------------------------------------------------------------

    def project_trusted(self, root: Path) -> bool:
        """Whether the user recorded trust for the project at ``root``.

        Raises:
            TrustFileError: the file is damaged or writable by someone else.
        """
        record = self._read().projects.get(project_key(root))
        return record is not None and record.trusted

    def set_project_trusted(self, root: Path, trusted: bool, *, allow_failed_guards: bool = False) -> None:
        """Record trust in (or its withdrawal from) the project at ``root``; grants stay.

        ``allow_failed_guards``: the agents' calls in this project go through (with a warning)
        while one of its extensions cannot run, instead of being blocked; only with trust, and
        until the next decision.

        Raises:
            TrustFileError: the file is damaged, not ours, or cannot be written.
        """
        with self._update() as document:
            record = document.projects.setdefault(project_key(root), _Project())
            record.trusted = trusted
            record.allow_failed_guards = trusted and allow_failed_guards
            record.decided_at = datetime.now(UTC).isoformat(timespec="seconds")

    def failed_guards_allowed(self, root: Path) -> bool:
        """Whether the user lets the agents' calls in the project at ``root`` through while one
        of its extensions cannot run (``extensions trust --allow-failed-guards``); off unless
        asked for. A repository cannot ask for it: the record is the user's.

        Raises:
            TrustFileError: the file is damaged or writable by someone else.
        """
        record = self._read().projects.get(project_key(root))
        return record is not None and record.trusted and record.allow_failed_guards

    def trusted_projects(self) -> list[str]:
        """The real paths of every trusted project."""
        return sorted(key for key, record in self._read().projects.items() if record.trusted)

    # -- grants ---------------------------------------------------------------------------

    def granted(self, root: Path, source: str, name: str) -> frozenset[str]:
        """The variables granted to extension ``name`` of ``source`` (project ones per project).

        Raises:
            TrustFileError: the file is damaged or writable by someone else.
        """
        document = self._read()
        if source != "project":
            return frozenset(document.user_grants.get(_user_key(source, name), ()))
        record = document.projects.get(project_key(root))
        return frozenset(record.grants.get(name, ())) if record is not None else frozenset()

    def grant(self, root: Path, source: str, name: str, variables: Iterable[str]) -> frozenset[str]:
        """Add ``variables`` to what extension ``name`` is granted; return the new set.

        Raises:
            TrustFileError: the file is damaged, not ours, or cannot be written.
        """
        return self._change_grants(root, source, name, lambda current: current | set(variables))

    def revoke(self, root: Path, source: str, name: str, variables: Iterable[str]) -> frozenset[str]:
        """Take ``variables`` back from extension ``name``; return what stays granted.

        Raises:
            TrustFileError: the file is damaged, not ours, or cannot be written.
        """
        return self._change_grants(root, source, name, lambda current: current - set(variables))

    def _change_grants(self, root: Path, source: str, name: str, change: _GrantChange) -> frozenset[str]:
        with self._update() as document:
            if source != "project":
                table, key = document.user_grants, _user_key(source, name)
            else:
                table, key = document.projects.setdefault(project_key(root), _Project()).grants, name
            after = change(set(table.get(key, ())))
            if after:
                table[key] = sorted(after)
            else:
                table.pop(key, None)
            return frozenset(after)

    # -- the file ---------------------------------------------------------------------------

    def _read(self) -> _Document:
        return self._record.read()

    def _update(self) -> contextlib.AbstractContextManager[_Document]:
        return self._record.update()


def _user_key(source: str, name: str) -> str:
    """How the grants of an extension outside the project are kept: a user one's by its name, one
    of another source (Copilot CLI's folder) by its id, so that the two never share a grant."""
    return name if source == "user" else f"{source}:{name}"


def decide_project_trust(
    root: Path, store: TrustStore, *, explicit: bool | None = None, environ: Mapping[str, str] | None = None
) -> TrustDecision:
    """Whether the project at ``root`` may run its extensions: the embedding application's
    ``explicit`` choice if it made one, else :data:`TRUST_ENV` set to ``1``, else the record."""
    if explicit is not None:
        return TrustDecision(explicit, "application")
    if (os.environ if environ is None else environ).get(TRUST_ENV) == "1":
        return TrustDecision(True, "environment")
    try:
        trusted = store.project_trusted(root)
    except TrustFileError as exc:
        return TrustDecision(False, "none", str(exc))
    return TrustDecision(trusted, "record" if trusted else "none")
