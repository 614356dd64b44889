"""``extensions install``, ``uninstall``, ``update`` and ``link``: extensions as packages.

A repository or a folder is installed in the user's extension folder (the default) or the
project's (``--project``); a distribution in the package scope (``<home>/packages/``). Fetching
is :mod:`extension_host.launch.sources`', staging, checking and placing
:mod:`extension_host.project.install`'s, the records :mod:`extension_host.project.origins`'.
What this module adds is the conversation: what a repository will run, shown and confirmed (at
a terminal, or ``--yes``), progress on stderr, one line per failure, ``--json``. A running host
sees a project or user install through its watcher; one in the package scope is told
(:func:`.one_shot.tell_running_host`), as every project's host runs those extensions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace as changed
from pathlib import Path
from typing import Any

from ..control.methods import METHOD_REFRESH
from ..errors import InstallError, ManifestError
from ..launch.sources import (
    SourceSpec,
    check_subdir,
    classify,
    export_commit,
    fetch_git,
    installed_distribution,
    pip_install,
)
from ..project.discovery import check_name, entry_files
from ..project.install import (
    Candidate,
    Scope,
    changed_files,
    check_free,
    checked_manifest,
    copy_folder,
    distribution_candidates,
    find_extensions,
    place,
    remove_tree,
    replace,
    scope_root,
    staging,
)
from ..project.origins import ORIGINS_DIR, Origin, now, read_origin, record_path, remove_origin, write_origin
from ..project.packages import normalise_distribution, package_extensions, packages_dir
from ..project.paths import find_project_root, user_home
from ..project.trust import TrustStore
from . import render
from .one_shot import tell_running_host
from .output import EXIT_FAILED, EXIT_OK, print_json, say

__all__ = ["install_command", "link_command", "uninstall_command", "update_command"]


def _places(args: argparse.Namespace) -> tuple[Path, Path]:
    return find_project_root(args.root), user_home(args.home)


def _progress(text: str) -> None:
    say(f"{text} ...", err=True)


# -- install ------------------------------------------------------------------------------


def install_command(args: argparse.Namespace) -> int:
    """``extensions install SOURCE [--user | --project] [--ref REF] [--subdir PATH] [--name NAME] [--yes]``."""
    return asyncio.run(_install(args))


async def _install(args: argparse.Namespace) -> int:
    root, home = _places(args)
    source = classify(args.source)
    subdir = check_subdir(args.subdir, args.source)
    if source.kind == "pip":
        if args.project or args.ref or subdir or args.name:
            raise InstallError(
                args.source,
                "a distribution's extensions go in the package scope, named by its entry points: "
                "--project, --ref, --subdir and --name do not apply to it",
            )
        return await _install_distribution(args, source, home)
    if args.ref and source.kind == "folder":
        raise InstallError(args.source, f"--ref applies to a git repository, and {source.location} is a folder")
    scope: Scope = "project" if args.project else "user"
    target = scope_root(scope, root, home)
    target.mkdir(parents=True, exist_ok=True)
    with staging(target) as stage:
        tree, origin, skipped = await _fetch(source, stage, args.ref, subdir)
        default = subdir.rsplit("/", 1)[-1] if subdir else source.default_name
        candidates = find_extensions(tree, args.source, default, args.name)
        for candidate in candidates:
            check_free(target, candidate.name, scope, args.source)
        if source.kind == "git":
            _confirm(args, origin, candidates, skipped)
        placed = place(candidates, target, scope, args.source, origin)
    trusted = TrustStore(home).project_trusted(root) if scope == "project" else None
    installed = [_installed_json(f"{scope}:{c.name}", path, c) for c, path in zip(candidates, placed, strict=True)]
    if args.json:
        print_json({"scope": scope, "installed": installed, "origin": origin.to_json(), "project_trusted": trusted})
        return EXIT_OK
    where = f" at {origin.commit[:12]}" if origin.commit else ""
    for item in installed:
        say(f"installed {item['id']} from {origin.source}{where} in {item['path']}")
    if trusted is False:
        say(
            f"note: {root} is not trusted, so its extensions ({', '.join(c.name for c in candidates)} included) "
            "do not run until you run 'extensions trust'",
            err=True,
        )
    return EXIT_OK


async def _fetch(
    source: SourceSpec, stage: Path, ref: str | None, subdir: str | None
) -> tuple[Path, Origin, list[str]]:
    """Fetch a repository or folder into ``stage/tree``; the tree, its origin, the submodules left out."""
    tree = stage / "tree"
    if source.kind == "folder":
        copy_folder(Path(source.location).joinpath(*(subdir or "").split("/")), tree)
        return tree, Origin("folder", source.location, now(), subdir=subdir), []
    _progress(f"cloning {source.location}")
    repo, commit = await fetch_git(source.location, stage, local=source.local, ref=ref)
    skipped = await export_commit(repo, commit, subdir, tree, source.location)
    remove_tree(repo)
    return tree, Origin("git", source.location, now(), ref=ref, commit=commit, subdir=subdir), skipped


def _confirm(args: argparse.Namespace, origin: Origin, candidates: list[Candidate], skipped: list[str]) -> None:
    """Show what a repository will run; go on only with ``--yes`` or a yes at a terminal."""
    assert origin.commit is not None
    ref = f" ({origin.ref})" if origin.ref else ""
    lines = [f"{origin.source} at commit {origin.commit[:12]}{ref} holds:"]
    for candidate in candidates:
        requires = candidate.manifest.requires
        needs = f"; requires {', '.join(requires)}" if requires else ""
        lines.append(f"  {candidate.name}: runs {candidate.entry}{needs}")
    if skipped:
        lines.append(f"  (submodules, not installed: {', '.join(skipped)})")
    say("\n".join(lines), err=True)
    if args.yes:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        raise InstallError(
            args.source,
            "an extension runs with your permissions: pass --yes to install it from a repository "
            "(there is no terminal to ask at)",
        )
    say("Install it, to run as you? [y/N] ", err=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise InstallError(args.source, "not installed: you did not confirm")


def _installed_json(extension_id: str, path: Path, candidate: Candidate) -> dict[str, Any]:
    return {
        "id": extension_id,
        "name": candidate.name,
        "path": str(path),
        "entry": candidate.entry,
        "requires": list(candidate.manifest.requires),
    }


async def _install_distribution(args: argparse.Namespace, source: SourceSpec, home: Path) -> int:
    root = packages_dir(home)
    root.mkdir(parents=True, exist_ok=True)
    with staging(root) as stage:
        target = stage / "target"
        _progress(f"installing {source.location} with pip")
        await pip_install(source.location, target)
        distribution = installed_distribution(target, args.source)
        candidates = distribution_candidates(target, args.source, distribution.name)
        folder = normalise_distribution(distribution.name)
        record = record_path(root, folder)
        current = read_origin(record) if (root / folder).exists() else None
        if (root / folder).exists():
            version = f" (version {current.version})" if current and current.version else ""
            raise InstallError(
                args.source,
                f"{distribution.name} is already installed{version}; run 'extensions update "
                f"package:{candidates[0].name}' or 'extensions uninstall package:{candidates[0].name}' first",
            )
        exposed = {extension.name: extension.distribution for extension in package_extensions(home)}
        for candidate in candidates:
            if candidate.name in exposed:
                raise InstallError(
                    args.source,
                    f"extension {candidate.name} is already installed from {exposed[candidate.name]}; "
                    f"run 'extensions uninstall package:{candidate.name}' first",
                )
        origin = Origin("pip", source.location, now(), distribution=distribution.name, version=distribution.version)
        write_origin(record, origin)
        try:
            os.rename(target, root / folder)
        except OSError as exc:
            remove_origin(record)
            raise InstallError(args.source, f"cannot move {distribution.name} into {root}: {exc.strerror}") from None
    installed = [
        _installed_json(f"package:{c.name}", root / folder / c.folder.relative_to(target), c) for c in candidates
    ]
    outcomes = await tell_running_host(args, METHOD_REFRESH, None, every_project=True)
    if args.json:
        print_json({"scope": "package", "installed": installed, "origin": origin.to_json()})
        return EXIT_OK
    for item in installed:
        say(f"installed {item['id']} from {distribution.name} {distribution.version} in {item['path']}")
    if distribution.requires:
        say(
            f"note: {distribution.name} declares dependencies ({', '.join(distribution.requires)}), which are not "
            "installed with it: an extension gets what its manifest's requires names",
            err=True,
        )
    if outcomes:
        say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK


# -- finding an installed extension --------------------------------------------------------


def _locate(args: argparse.Namespace, root: Path, home: Path) -> tuple[str, str]:
    """``(scope, name)`` of the installed extension ``args.name`` names (a name or an id; the
    scope flags narrow it).

    Raises:
        InstallError: no scope holds it, or several do and nothing says which.
    """
    scope, _, name = args.name.rpartition(":")
    wanted = [scope] if scope else ["project"] if args.project else ["user"] if args.user else []
    if scope not in ("", "project", "user", "package"):
        raise InstallError(args.name, f"{args.name!r} is not an extension name or id (project:, user:, package:)")
    found = []
    for candidate in wanted or ["project", "user", "package"]:
        if candidate == "package":
            if any(extension.name == name for extension in package_extensions(home)):
                found.append(candidate)
        else:
            folder = scope_root(candidate, root, home) / name
            if folder.exists() or folder.is_symlink():
                found.append(candidate)
    if not found:
        where = f"the {wanted[0]} scope" if wanted else "the project, the user folder or the package scope"
        raise InstallError(args.name, f"no extension named {name} in {where}")
    if len(found) > 1:
        raise InstallError(
            args.name,
            f"{name} is in the {' and the '.join(found)} scopes; say which with its id ({found[0]}:{name}, ...)",
        )
    return found[0], name


# -- uninstall ----------------------------------------------------------------------------


def uninstall_command(args: argparse.Namespace) -> int:
    """``extensions uninstall NAME [--user | --project] [--force]``."""
    root, home = _places(args)
    scope, name = _locate(args, root, home)
    outcomes = None
    if scope == "package":
        exposed = package_extensions(home)
        distribution = next(extension.distribution for extension in exposed if extension.name == name)
        removed = [f"package:{e.name}" for e in exposed if e.distribution == distribution]
        path = packages_dir(home) / distribution
        record = record_path(packages_dir(home), distribution)
        origin = _origin_or_none(record)
        remove_tree(path)
        remove_origin(record)
        outcomes = asyncio.run(tell_running_host(args, METHOD_REFRESH, None, every_project=True))
    else:
        path = scope_root(scope, root, home) / name
        record = record_path(path.parent, name)
        origin = _origin_or_none(record)
        if not record.exists() and not args.force:
            raise InstallError(
                args.name,
                f"{path} was not installed by 'extensions install' (it has no origin record); "
                "pass --force to remove it anyway",
            )
        removed = [f"{scope}:{name}"]
        remove_tree(path)  # a link: only the link
        remove_origin(record)
    if args.json:
        print_json({"removed": removed, "path": str(path), "origin": origin.to_json() if origin else None})
        return EXIT_OK
    what = "the link" if origin is not None and origin.kind == "link" else "it"
    say(f"uninstalled {', '.join(removed)} (removed {what}: {path})")
    if outcomes:
        say("the running host applied it:\n" + render.reload_outcomes(outcomes))
    return EXIT_OK


def _origin_or_none(record: Path) -> Origin | None:
    try:
        return read_origin(record)
    except InstallError:
        return None  # a damaged record still marks something install made


# -- update -------------------------------------------------------------------------------


def update_command(args: argparse.Namespace) -> int:
    """``extensions update [NAME] [--user | --project] [--ref REF]``."""
    return asyncio.run(_update(args))


async def _update(args: argparse.Namespace) -> int:
    root, home = _places(args)
    if args.ref and not args.name:
        raise InstallError("update", "--ref moves one extension: name it (extensions update NAME --ref REF)")
    targets = [_locate(args, root, home)] if args.name else _installed(root, home)
    results: list[dict[str, Any]] = []
    for scope, name in targets:
        try:
            results.append(await _update_one(args, scope, name, root, home))
        except (InstallError, ManifestError) as exc:
            results.append({"id": f"{scope}:{name}", "status": "failed", "error": str(exc)})
    if any(result["status"] == "updated" and result["id"].startswith("package:") for result in results):
        await tell_running_host(args, METHOD_REFRESH, None, every_project=True)
    if args.json:
        print_json({"updates": results})
    else:
        for result in results:
            say(_update_line(result), err=result["status"] == "failed")
        if not results:
            say("nothing installed by 'extensions install' to update")
    return EXIT_FAILED if any(result["status"] == "failed" for result in results) else EXIT_OK


def _installed(root: Path, home: Path) -> list[tuple[str, str]]:
    """Every extension (and distribution) with an origin record, project first."""
    found: list[tuple[str, str]] = []
    for scope in ("project", "user"):
        folder = scope_root(scope, root, home)
        for record in sorted((folder / ORIGINS_DIR).glob("*.json")):
            if (folder / record.stem).exists():
                found.append((scope, record.stem))
    seen: set[str] = set()
    for extension in package_extensions(home):
        if extension.distribution not in seen:
            seen.add(extension.distribution)
            found.append(("package", extension.name))
    return found


def _update_line(result: dict[str, Any]) -> str:
    if result["status"] == "failed":
        return render.error_line(f"{result['id']}: {result['error']}")
    if result["status"] == "updated":
        count = result.get("files_changed")
        files = f", {count} file{'' if count == 1 else 's'} changed" if result.get("files_changed") is not None else ""
        return f"{result['id']}: updated {result['from']} -> {result['to']}{files}"
    return f"{result['id']}: {result['status']} ({result['to']})"


async def _update_one(args: argparse.Namespace, scope: str, name: str, root: Path, home: Path) -> dict[str, Any]:
    extension_id = f"{scope}:{name}"
    if scope == "package":
        return await _update_distribution(extension_id, name, home)
    folder = scope_root(scope, root, home) / name
    record = record_path(folder.parent, name)
    origin = read_origin(record)
    if origin is None:
        raise InstallError(
            name, f"{folder} was not installed by 'extensions install': there is nothing to update it from"
        )
    if origin.kind == "link":
        return {"id": extension_id, "status": "linked, used in place", "from": None, "to": origin.source}
    ref = args.ref or origin.ref
    with staging(folder.parent) as stage:
        source = SourceSpec(
            origin.kind,
            origin.source,
            name,
            local=origin.source.startswith(("/", "file://")),
        )
        tree, new, _ = await _fetch(source, stage, ref, origin.subdir)
        if origin.kind == "git" and new.commit == origin.commit:
            if ref != origin.ref:
                write_origin(record, changed(origin, ref=ref))
            return {"id": extension_id, "status": "up to date", "from": _short(origin.commit), "to": _short(new.commit)}
        candidates = find_extensions(tree, origin.source, name)
        picked = candidates[0] if len(candidates) == 1 else next((c for c in candidates if c.name == name), None)
        if picked is None:
            raise InstallError(name, f"{origin.source} no longer holds an extension named {name}")
        count = changed_files(folder, picked.folder)
        if origin.kind == "folder" and count == 0:
            return {"id": extension_id, "status": "up to date", "from": None, "to": origin.source}
        replace(picked.folder, folder, record, origin.source, new)
    before, after = (_short(origin.commit), _short(new.commit)) if origin.kind == "git" else (None, origin.source)
    return {"id": extension_id, "status": "updated", "from": before, "to": after, "files_changed": count}


def _short(commit: str | None) -> str | None:
    return commit[:12] if commit else None


async def _update_distribution(extension_id: str, name: str, home: Path) -> dict[str, Any]:
    root = packages_dir(home)
    distribution = next(extension.distribution for extension in package_extensions(home) if extension.name == name)
    record = record_path(root, distribution)
    origin = read_origin(record)
    if origin is None or origin.kind != "pip":
        raise InstallError(name, f"{root / distribution} has no origin record: there is nothing to update it from")
    with staging(root) as stage:
        target = stage / "target"
        _progress(f"installing {origin.source} with pip")
        await pip_install(origin.source, target)
        found = installed_distribution(target, origin.source)
        distribution_candidates(target, origin.source, found.name)
        count = changed_files(root / distribution, target)
        if found.version == origin.version and count == 0:
            return {"id": extension_id, "status": "up to date", "from": origin.version, "to": found.version}
        new = Origin("pip", origin.source, now(), distribution=found.name, version=found.version)
        replace(target, root / distribution, record, origin.source, new)
    return {
        "id": extension_id,
        "status": "updated",
        "from": origin.version,
        "to": found.version,
        "files_changed": count,
    }


# -- link ---------------------------------------------------------------------------------


def link_command(args: argparse.Namespace) -> int:
    """``extensions link PATH [--name NAME] [--user | --project]``."""
    root, home = _places(args)
    path = Path(args.path).expanduser()
    if not path.is_dir():
        raise InstallError(str(path), f"{path}: no such folder")
    path = path.resolve()
    entries = entry_files(path)
    if len(entries) != 1:
        found = ", ".join(entries) if entries else "none"
        raise InstallError(
            str(path), f"{path} must hold one entry file (extension.py, .mjs, .cjs or .js); it has {found}"
        )
    name = args.name or path.name
    problem = check_name(name)
    if problem is not None:
        raise InstallError(str(path), f"{problem}; choose another with --name")
    checked_manifest(path, str(path), name)
    scope: Scope = "project" if args.project else "user"
    target = scope_root(scope, root, home)
    target.mkdir(parents=True, exist_ok=True)
    check_free(target, name, scope, str(path))
    origin = Origin("link", str(path), now())
    record = record_path(target, name)
    write_origin(record, origin)
    try:
        os.symlink(path, target / name, target_is_directory=True)
    except OSError as exc:
        remove_origin(record)
        raise InstallError(str(path), f"cannot link {target / name}: {exc.strerror or exc}") from None
    if args.json:
        print_json(
            {"id": f"{scope}:{name}", "path": str(target / name), "target": str(path), "origin": origin.to_json()}
        )
    else:
        say(
            f"linked {scope}:{name}: {target / name} -> {path} "
            "(edits there take effect; uninstall removes only the link)"
        )
    return EXIT_OK
