"""Fetching what ``extensions install`` installs: a git repository's files, or a distribution.

:func:`classify` says what a SOURCE on the command line is: a git URL (``git+…``, ``https://``,
``ssh://``, ``file://``, ``user@host:path``) or a local repository (a folder holding ``.git``), a
local folder (copied), or a pip distribution (a wheel file, a local project with a
``pyproject.toml``/``setup.py`` and no extension at its top, a requirement such as
``hello-ext==1.2``, or anything after ``pip:``).

A repository is cloned with ``--no-checkout`` through the hardened git helper
(:mod:`.git`), and the files of one commit are written here from ``ls-tree`` and
``cat-file --batch``, which hand them over as stored: no checkout, so no ``.gitattributes``
filter, no hook and no program of the repository's runs, whatever the repository or the user's
configuration says. Each path is checked as it is written (no ``..``, no ``.git``, no link out
of the tree), sizes are bounded before a byte is read.

A distribution is installed with ``pip install --no-deps --target`` (this interpreter's pip,
never into its environment) into a staging folder: each distribution gets a folder of its own,
so that one is updated or removed by replacing or removing its folder, and two never disagree
over a shared dependency. Its extensions run as every extension does, as the script of their
folder; what they import besides is what their manifest's ``requires`` names. This module
fetches; where things go and what is checked is :mod:`extension_host.project.install`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from ..errors import InstallError
from ..project.discovery import entry_files
from ..project.install import MAX_BYTES, MAX_FILES
from ..project.paths import PROJECT_EXTENSIONS_DIR
from .git import FETCH_PROTOCOLS, GitResult, run_git_bytes
from .interpreter import python_command
from .process_groups import signal_group

__all__ = [
    "CLONE_TIMEOUT",
    "PIP_TIMEOUT",
    "Distribution",
    "SourceKind",
    "SourceSpec",
    "check_subdir",
    "classify",
    "export_commit",
    "fetch_git",
    "installed_distribution",
    "pip_install",
]

SourceKind = Literal["git", "folder", "pip"]
CLONE_TIMEOUT: Final = 300.0
"""Seconds a clone may take."""
PIP_TIMEOUT: Final = 600.0
"""Seconds ``pip install`` may take."""
_URL_SCHEMES: Final = ("https://", "ssh://", "file://")
_REFUSED_SCHEMES: Final = ("http://", "git://")
_SCP_LIKE: Final = re.compile(r"\A[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/]")
_REQUIREMENT: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?\s*([<>=!~][^;\s]*)?\Z")
_REF: Final = re.compile(r"\A[A-Za-z0-9._/+-]{1,255}\Z")
_METADATA_MAX_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """What a SOURCE given to ``extensions install`` is."""

    kind: SourceKind
    location: str
    """The URL, the absolute path, or the requirement."""
    default_name: str
    """The name a single extension at the top of it gets without ``--name``."""
    local: bool = False
    """A repository on this machine (``file`` is then the transport)."""


def classify(text: str) -> SourceSpec:
    """What ``text`` names (see the module).

    Raises:
        InstallError: it names nothing that exists, or something that cannot be installed.
    """
    if not text or text.startswith("-"):
        raise InstallError(text, f"{text!r} is not a source (a git URL, a folder, a wheel or a distribution name)")
    if text.startswith("pip:"):
        return SourceSpec("pip", text.removeprefix("pip:").strip(), "")
    url = text.removeprefix("git+")
    if "#" in url and (url != text or url.startswith(_URL_SCHEMES)):
        raise InstallError(text, f"{text}: give a repository's folder with --subdir, not after '#'")
    if url.startswith(_REFUSED_SCHEMES):
        raise InstallError(
            text, f"{text}: only https://, ssh:// and file:// repositories are fetched (no integrity otherwise)"
        )
    if url.startswith(_URL_SCHEMES) or _SCP_LIKE.match(url):
        return SourceSpec("git", url, _repository_name(url), local=url.startswith("file://"))
    path = Path(url).expanduser()
    if path.is_dir():
        resolved = path.resolve()
        if (resolved / ".git").exists():
            return SourceSpec("git", str(resolved), resolved.name, local=True)
        if url != text:
            raise InstallError(text, f"{resolved} is not a git repository (no .git in it)")
        packaged = (resolved / "pyproject.toml").is_file() or (resolved / "setup.py").is_file()
        if packaged and not entry_files(resolved) and not (resolved / PROJECT_EXTENSIONS_DIR).is_dir():
            return SourceSpec("pip", str(resolved), resolved.name)
        return SourceSpec("folder", str(resolved), resolved.name)
    if path.is_file():
        if path.suffix == ".whl":
            return SourceSpec("pip", str(path.resolve()), "")
        raise InstallError(text, f"{text} is a file, not a folder, a git repository or a wheel (.whl)")
    if url != text or "/" in url or url.startswith((".", "~")) or url.endswith(".whl"):
        raise InstallError(text, f"{text}: no such file or folder")
    if _REQUIREMENT.fullmatch(text):
        return SourceSpec("pip", text, "")
    raise InstallError(text, f"{text!r} is not a git URL, a folder, a wheel or a distribution name")


def _repository_name(url: str) -> str:
    """``https://host/o/greet.git`` → ``greet``."""
    last = re.split(r"[/:]", url.rstrip("/"))[-1]
    return last.removesuffix(".git") or "extension"


def check_subdir(subdir: str | None, source: str) -> str | None:
    """``subdir`` as a relative POSIX path with no ``..`` (``None`` stays ``None``).

    Raises:
        InstallError: it is absolute or climbs out.
    """
    if subdir is None:
        return None
    path = PurePosixPath(subdir.replace(os.sep, "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts or ".git" in path.parts:
        raise InstallError(source, f"--subdir {subdir!r} must be a folder inside the source (no '..', not absolute)")
    return str(path)


def _protocols(local: bool) -> tuple[str, ...]:
    return ("file",) if local else FETCH_PROTOCOLS


async def fetch_git(url: str, staging: Path, *, local: bool, ref: str | None) -> tuple[Path, str]:
    """Clone ``url`` into ``staging/repo`` (no checkout); the clone and the commit ``ref``
    (default: the repository's default branch) resolves to.

    Raises:
        InstallError: git is missing, the clone fails (git's reason), or ``ref`` is not a
            branch, tag or commit of it.
    """
    if ref is not None and (not _REF.fullmatch(ref) or ref.startswith("-") or ".." in ref):
        raise InstallError(url, f"--ref {ref!r} is not a branch, tag or commit name")
    repo = staging / "repo"
    cloned = await run_git_bytes(
        staging,
        "clone",
        "--no-checkout",
        "--quiet",
        "--",
        url,
        "repo",
        timeout=CLONE_TIMEOUT,
        protocols=_protocols(local),
    )
    _check(cloned, url, f"cannot clone {url}")
    candidates = ["HEAD"] if ref is None else [f"refs/remotes/origin/{ref}", f"refs/tags/{ref}", ref]
    for candidate in candidates:
        resolved = await run_git_bytes(repo, "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}")
        if resolved is not None and resolved.ok:
            return repo, resolved.stdout.decode("ascii", "replace").strip()
    if ref is None:
        raise InstallError(url, f"{url} has no commits to install")
    raise InstallError(url, f"ref {ref!r} is not a branch, tag or commit of {url}")


def _check(result: GitResult | None, source: str, what: str) -> GitResult:
    if result is None:
        raise InstallError(source, "git is not installed; install git to install from a repository")
    if not result.ok:
        reason = result.error or ("it took too long" if result.returncode is None else "git failed")
        raise InstallError(source, f"{what}: {reason.removeprefix('fatal: ')}")
    return result


async def export_commit(repo: Path, commit: str, subdir: str | None, destination: Path, source: str) -> list[str]:
    """Write the files of ``commit`` (under ``subdir``) to the new folder ``destination`` as
    stored, without a checkout; the paths of the submodules left out.

    Raises:
        InstallError: ``subdir`` is not a folder of the commit, the tree is too big, or a path
            or link in it is unsafe.
    """
    treeish = f"{commit}:{subdir}" if subdir else commit
    listing = await run_git_bytes(repo, "ls-tree", "-r", "-z", "-l", treeish, limit=64 * 1024 * 1024, timeout=60)
    if listing is not None and not listing.ok and subdir:
        raise InstallError(source, f"no folder {subdir} in {source} at {commit[:12]}")
    _check(listing, source, f"cannot read {source} at {commit[:12]}")
    entries: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    total = 0
    for record in listing.stdout.split(b"\0") if listing else ():
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid, size = meta.decode("ascii", "replace").split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if kind == "commit":
            skipped.append(path)
            continue
        _safe_path(path, source)
        entries.append((mode, oid, path))
        total += int(size) if size.isdigit() else 0
        if len(entries) > MAX_FILES or total > MAX_BYTES:
            raise InstallError(
                source, f"{source} is too big to install (over {MAX_FILES} files or {MAX_BYTES >> 20} MiB)"
            )
    blobs = await run_git_bytes(
        repo, "cat-file", "--batch", stdin=b"".join(f"{oid}\n".encode() for _, oid, _ in entries),
        limit=MAX_BYTES + 64 * len(entries) + 1, timeout=120,
    )  # fmt: skip
    data = _check(blobs, source, f"cannot read {source} at {commit[:12]}").stdout
    destination.mkdir()
    offset = 0
    for mode, oid, path in entries:
        end = data.index(b"\n", offset)
        header = data[offset:end].split()
        if len(header) != 3 or header[0].decode() != oid:
            raise InstallError(source, f"git did not hand over {path} as asked")
        length = int(header[2])
        content = data[end + 1 : end + 1 + length]
        offset = end + 1 + length + 1
        _write(destination, path, mode, content, source)
    return skipped


def _safe_path(path: str, source: str) -> None:
    parts = path.split("/")
    if path.startswith("/") or any(part in ("", ".", "..") or part.lower() == ".git" or "\0" in part for part in parts):
        raise InstallError(source, f"{source} holds an unsafe path {path!r}; refused")


def _write(root: Path, path: str, mode: str, content: bytes, source: str) -> None:
    target = root.joinpath(*path.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        link = content.decode("utf-8", "surrogateescape")
        real = os.path.normpath(os.path.join(os.path.dirname(path), link))
        if os.path.isabs(link) or real == ".." or real.startswith("../"):
            raise InstallError(source, f"{path} is a link to {link!r}, outside the extension; refused")
        os.symlink(link, target)
        return
    with open(target, "xb") as file:  # never through something already there
        file.write(content)
    os.chmod(target, 0o755 if mode == "100755" else 0o644)


@dataclass(frozen=True, slots=True)
class Distribution:
    """The distribution a ``pip install --target`` put in a folder."""

    name: str
    version: str
    requires: tuple[str, ...]
    """What it declares it needs (``Requires-Dist``), which ``--no-deps`` left out."""


async def pip_install(requirement: str, target: Path, *, timeout: float = PIP_TIMEOUT) -> None:
    """``pip install --no-deps --target target requirement`` with this interpreter.

    Raises:
        InstallError: pip failed (its first ``ERROR:`` line), or took longer than ``timeout``.
    """
    argv = python_command(
        "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check", "--no-warn-script-location",
        "--quiet", "--target", str(target), requirement,
    )  # fmt: skip
    environment = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        cwd=target.parent,
        env=environment,
        start_new_session=True,
    )
    try:
        async with asyncio.timeout(timeout):
            _, err = await process.communicate()
    except TimeoutError:
        raise InstallError(requirement, f"pip did not finish installing {requirement} within {timeout:g} s") from None
    finally:
        if process.returncode is None:
            signal_group(process.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await process.wait()
    if process.returncode != 0:
        lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
        reason = next((line for line in lines if line.startswith("ERROR:")), lines[-1] if lines else "pip failed")
        raise InstallError(requirement, f"pip could not install {requirement}: {reason.removeprefix('ERROR: ')}")


def installed_distribution(target: Path, source: str) -> Distribution:
    """The one distribution in ``target``, from its ``METADATA``.

    Raises:
        InstallError: there is none (or more than one), or its metadata has no name.
    """
    infos = sorted(name for name in os.listdir(target) if name.endswith(".dist-info"))
    if len(infos) != 1:
        raise InstallError(source, f"pip installed {len(infos)} distributions from {source}, not one")
    with open(target / infos[0] / "METADATA", "rb") as file:
        text = file.read(_METADATA_MAX_BYTES).decode("utf-8", "replace")
    headers, _, _ = text.partition("\n\n")
    fields: dict[str, list[str]] = {}
    for line in headers.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), []).append(value.strip())
    name = (fields.get("name") or [""])[0]
    if not name:
        raise InstallError(source, f"the distribution from {source} has no name in its metadata")
    return Distribution(name, (fields.get("version") or ["?"])[0], tuple(fields.get("requires-dist") or ()))
