"""Custom agent files: the Markdown files GitHub Copilot CLI reads custom agents from, read into
:class:`~extension_host.session.custom_agents.CustomAgent` values, so the same files work in both.

Where: the user's ``<home>/agents/`` (beside user extensions), then the project's
``.github/agents/`` and ``.claude/agents/`` (:data:`~extension_host.project.paths.PROJECT_AGENT_DIRS`),
each searched through its subfolders for ``*.md`` files (``NAME.agent.md`` or ``NAME.md``). Of
two agents with one name the first folder's wins (the CLI lets a user's agent override a
project's); two files of one folder giving one name is a problem, and the first by path wins.

A file opens with a front matter block (:mod:`~extension_host.session.front_matter`); the body
after it is the agent's prompt. Keys: ``description`` (required: the parent's model reads it to
choose the agent), ``name`` (default: the file's path under the folder without ``.agent.md`` or
``.md``, folders joined by ``--``: ``review/deep.agent.md`` is ``review--deep``), ``tools`` (a
list, or one comma-separated string; unset or ``"*"`` every tool, ``[]`` none), ``model``. An
agent with ``infer: false`` or ``disable-model-invocation: true`` is one the model may not
start, so it is not loaded (it still takes its name). Other keys are left to other tools.

Reading only: nothing in a file is run. A file that cannot be used gives one line in
:attr:`AgentFiles.problems` (``<path>: <what is wrong and what to do>``) and never an
exception; files are bounded in size (:data:`MAX_FILE_BYTES`) and number (:data:`MAX_FILES`).
Whether a project's files may be read at all (its trust) is the caller's decision.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..project.paths import PROJECT_AGENT_DIRS, agents_dir
from ..project.private_files import NotRegularFile, open_regular
from .custom_agents import CustomAgent

if TYPE_CHECKING:
    from .front_matter import Value

__all__ = [
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "AgentFiles",
    "load_agent_files",
]

MAX_FILE_BYTES: Final = 256 * 1024
"""The largest agent file read."""
MAX_FILES: Final = 200
"""The most agent files read, over all folders."""

_SUFFIXES: Final = (".agent.md", ".md")
_KEYS: Final = frozenset({"name", "description", "tools", "model", "infer", "disable-model-invocation"})


@dataclass(frozen=True, slots=True)
class AgentFiles:
    """The agents a project's and a user's files give, and one line per file that gave none."""

    agents: tuple[CustomAgent, ...] = ()
    problems: tuple[str, ...] = ()


class _Unusable(Exception):
    """A file that gives no agent; the message says why and what to do."""


def load_agent_files(
    project_root: Path | None, user_root: Path, *, max_files: int = MAX_FILES, max_bytes: int = MAX_FILE_BYTES
) -> AgentFiles:
    """The custom agents in the files of ``user_root`` (the user's extension-host home) and
    ``project_root`` (see the module; ``None``: the user's only, as for a project that is not
    trusted), by name; the problems of the files that give none."""
    folders = [(agents_dir(user_root), "user")]
    if project_root is not None:
        folders += [(project_root / folder, "project") for folder in PROJECT_AGENT_DIRS]
    problems: list[str] = []
    taken: dict[str, tuple[Path, Path]] = {}  # name -> (folder, file)
    agents: dict[str, CustomAgent] = {}
    left = max_files
    for folder, source in folders:
        paths = list(_agent_paths(folder, left + 1))
        if len(paths) > left:
            problems.append(f"{folder}: more than {max_files} agent files in all; the rest are not read: remove some")
            paths = paths[:left]
        left -= len(paths)
        for path in paths:
            try:
                agent, offered = _read(path, folder, source, max_bytes)
            except _Unusable as exc:
                problems.append(f"{path}: {exc}")
                continue
            if agent.name in taken:
                first_folder, first = taken[agent.name]
                if first_folder == folder:
                    problems.append(
                        f"{path}: the agent name {agent.name!r} is also given by {first}, which wins: rename one"
                    )
                continue
            taken[agent.name] = (folder, path)
            if offered:
                agents[agent.name] = agent
    return AgentFiles(tuple(agents[name] for name in sorted(agents)), tuple(problems))


def _agent_paths(folder: Path, most: int) -> Iterator[Path]:
    """The ``*.md`` files under ``folder`` in path order, at most ``most`` (none if it is missing)."""
    found = 0
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield Path(here) / name
                found += 1
                if found >= most:
                    return


def _name_from(path: Path, folder: Path) -> str:
    parts = list(path.relative_to(folder).parts)
    last = parts[-1]
    parts[-1] = next(last[: -len(suffix)] for suffix in _SUFFIXES if last.endswith(suffix))
    return "--".join(parts)


def _read(path: Path, folder: Path, source: str, max_bytes: int) -> tuple[CustomAgent, bool]:
    """The agent ``path`` gives, and whether the model may start it.

    Raises:
        _Unusable: it gives none.
    """
    from .front_matter import FrontMatterError, parse_front_matter, split_front_matter  # a file found: rare

    text = _text(path, max_bytes)
    try:
        matter = split_front_matter(text)
        if matter is None:
            raise _Unusable("no front matter: start the file with a '---' block holding at least 'description: ...'")
        values = parse_front_matter(matter, _KEYS)
    except FrontMatterError as exc:
        raise _Unusable(f"front matter {exc}") from None
    name = values.get("name")
    if name is None:
        name = _name_from(path, folder)
    elif not isinstance(name, str) or not name.strip():
        raise _Unusable(f"'name' must be text, found {name!r}: quote it or leave it out to use the file's name")
    description = values.get("description")
    if "description" not in values:
        raise _Unusable("'description' is missing: add 'description: what the agent is for' (the model chooses by it)")
    if not isinstance(description, str):
        raise _Unusable(f"'description' must be text, found {description!r}: quote it")
    model = values.get("model")
    if model is not None and not isinstance(model, str):
        raise _Unusable(f"'model' must be text, found {model!r}: quote it")
    infer, hidden = values.get("infer"), values.get("disable-model-invocation")
    for key, flag in (("infer", infer), ("disable-model-invocation", hidden)):
        if flag is not None and not isinstance(flag, bool):
            raise _Unusable(f"'{key}' must be true or false, found {flag!r}")
    try:
        agent = CustomAgent(
            name=name.strip(),
            prompt=matter.body.strip(),
            description=description.strip(),
            tools=_tools(values.get("tools")),
            model=model,
            source=source,
        )
    except ValueError as exc:
        raise _Unusable(f"{exc}: rename the file or set 'name'") from None
    return agent, infer is not False and hidden is not True


def _text(path: Path, max_bytes: int) -> str:
    try:
        with open_regular(path) as (file, _info):  # a pipe or a device would never end
            data = file.read(max_bytes + 1)
    except NotRegularFile:
        raise _Unusable("not a regular file: replace it with one or remove it") from None
    except OSError as exc:
        raise _Unusable(f"cannot be read ({exc.strerror or exc}): check that it is a readable file") from None
    if len(data) > max_bytes:
        raise _Unusable(f"larger than {max_bytes // 1024} KiB: shorten the prompt")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unusable(f"not UTF-8 text (byte {exc.start}): save it as UTF-8") from None


def _tools(value: Value) -> tuple[str, ...] | None:
    """The allowlist ``tools`` gives: a list, or one comma-separated string; ``*`` every tool."""
    if value is None:
        return None
    items = [part.strip() for part in value.split(",")] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise _Unusable(f'\'tools\' must be a list of tool names, found {value!r}: write tools: ["view", "bash"]')
    names = tuple(item for item in items if isinstance(item, str) and item)
    return None if "*" in names else names
