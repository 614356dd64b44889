"""The Python installer that builds an extension's environment: uv or pip, how it is run, with
what environment, for how long, and what it says when it fails.

:func:`choose_installer`: ``uv`` when it is on the ``PATH``, else pip (:data:`INSTALLER_ENV`
picks one). :func:`build_steps`: the command lines, ``uv venv`` and ``uv pip install --python
<env>``, or ``python -m venv --without-pip`` and the host's own pip pointed at the new
environment (``pip --python <env> install``; without a host pip new enough, the environment gets
a pip of its own from ``ensurepip``); the requirements are argv items after ``--``, never
through a shell. :func:`installer_environment`: the host's stripped environment (no secrets:
see :mod:`extension_host.project.environment`) plus the user's index settings
(:data:`INDEX_SETTINGS`), minus what would install somewhere else
(:data:`NOT_FOR_THE_INSTALLER`). :func:`installer_reason`: the one line of its output that
says why it failed.

This module builds command lines and reads output; it runs nothing (:mod:`.python_env` does).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from ..errors import ExtensionHostError
from .interpreter import python_args

__all__ = [
    "INDEX_SETTINGS",
    "INSTALLER_ENV",
    "NOT_FOR_THE_INSTALLER",
    "Installer",
    "RequirementsFailed",
    "build_steps",
    "choose_installer",
    "host_pip_has_python_option",
    "installer_environment",
    "installer_reason",
]

Installer = Literal["uv", "pip"]


INSTALLER_ENV: Final = "EXTENSION_HOST_PYTHON_INSTALLER"
"""``uv`` or ``pip``: build environments with that one (default: uv when it is on the ``PATH``)."""
INDEX_SETTINGS: Final = re.compile(
    r"PIP_(INDEX_URL|EXTRA_INDEX_URL|FIND_LINKS|NO_INDEX|TRUSTED_HOST|CERT|CLIENT_CERT|KEYRING_PROVIDER|CONFIG_FILE)"
    r"|UV_\w+"
)
"""The user's installer settings that reach the installer as they are, even those the stripped
environment withholds (an index URL with a token in it, ``UV_INDEX_<NAME>_PASSWORD``): where to
install from, and how to log in there, are the user's."""
NOT_FOR_THE_INSTALLER: Final = re.compile(
    r"PIP_(TARGET|PREFIX|ROOT|PYTHON|USER|REQUIREMENT|EDITABLE|SRC)"
    r"|UV_(PYTHON|SYSTEM_PYTHON|BREAK_SYSTEM_PACKAGES|PROJECT_ENVIRONMENT)"
    r"|PYTHONPATH|PYTHONHOME|VIRTUAL_ENV|CONDA_PREFIX"
)
"""Settings that would install somewhere else than the environment being built, or run the
installer on another interpreter: left out, whoever set them."""
_PIP_WITH_PYTHON_OPTION: Final = (22, 3)
"""The first pip with ``--python`` (install into another interpreter's environment)."""

_REASON_MAX: Final = 300
"""The longest reason kept (characters); a longer one is cut, with an ellipsis."""

_DECORATION: Final = " \t×╰─▶│|╭╮╯·•-"
"""What uv draws around its messages (``  × No solution found``, ``  ╰─▶ Because ...``)."""
_ASIDE: Final = re.compile(r"(?i)^(hint|help|note|warning|notice|\[notice\])\b")


class RequirementsFailed(ExtensionHostError):
    """An extension's environment could not be built; the message is one line saying why."""

    def __init__(self, message: str, installer: str | None = None) -> None:
        super().__init__(message)
        self.installer = installer


def choose_installer(environment: Mapping[str, str]) -> tuple[Installer, str | None]:
    """Which installer builds environments, and the ``uv`` executable when it is uv.

    Raises:
        RequirementsFailed: :data:`INSTALLER_ENV` asks for something else, or for uv when it
            is not on the ``PATH``.
    """
    wanted = environment.get(INSTALLER_ENV, "").strip().lower()
    if wanted not in ("", "uv", "pip"):
        raise RequirementsFailed(f"{INSTALLER_ENV} is {wanted!r}: give uv or pip (or leave it unset)")
    uv = shutil.which("uv", path=environment.get("PATH")) if wanted != "pip" else None
    if wanted == "uv" and uv is None:
        raise RequirementsFailed(f"{INSTALLER_ENV} asks for uv, and uv is not on the PATH: install it, or unset it")
    return ("uv", uv) if uv is not None else ("pip", None)


def installer_environment(stripped: Mapping[str, str], host: Mapping[str, str]) -> dict[str, str]:
    """The installer's environment: ``stripped`` (the host's, without secrets) plus the user's
    :data:`INDEX_SETTINGS` from ``host``, without :data:`NOT_FOR_THE_INSTALLER`; the user's
    pip ``user = true`` cannot apply (a virtual environment has no user site)."""
    env = {name: value for name, value in stripped.items() if not NOT_FOR_THE_INSTALLER.fullmatch(name)}
    for name, value in host.items():
        if INDEX_SETTINGS.fullmatch(name) and not NOT_FOR_THE_INSTALLER.fullmatch(name):
            env[name] = value
    env["PIP_USER"] = "0"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def host_pip_has_python_option() -> bool:
    if importlib.util.find_spec("pip") is None:
        return False
    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return False
    numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    return numbers >= _PIP_WITH_PYTHON_OPTION


def build_steps(
    installer: Installer, uv: str | None, venv: Path, requires: tuple[str, ...], *, host_pip: bool = True
) -> list[tuple[str, ...]]:
    """The command lines that build an environment at ``venv`` holding ``requires``: make it,
    then install into it (requirements after ``--``, one argv item each). ``host_pip``: the
    host's pip can install into another interpreter's environment (else the environment gets a
    pip of its own first)."""
    python = str(venv / "bin" / "python")
    if installer == "uv":
        assert uv is not None
        return [
            (uv, "venv", "--python", sys.executable, str(venv)),
            (uv, "pip", "install", "--python", python, "--", *requires),
        ]
    pip_options = ("install", "--disable-pip-version-check", "--no-input", "--", *requires)
    if host_pip:
        return [
            (sys.executable, *python_args("-m", "venv", "--without-pip", str(venv))),
            (sys.executable, *python_args("-m", "pip", "--python", python, *pip_options)),
        ]
    return [
        (sys.executable, *python_args("-m", "venv", str(venv))),
        (python, *python_args("-m", "pip", *pip_options)),
    ]


def installer_reason(lines: list[str]) -> str | None:
    """What the installer's output says went wrong, in one line: pip's last ``ERROR:`` line
    (``No matching distribution found for nosuchpkg==9``), else the last line that is not an
    aside (a hint, a note), without uv's box drawing or an ``error:`` prefix."""
    for line in reversed(lines):
        if line.startswith("ERROR: "):
            return _cut(line.removeprefix("ERROR: "))
    for line in reversed(lines):
        text = line.strip().lstrip(_DECORATION).strip()
        if text and not text.startswith("===") and not _ASIDE.match(text):
            return _cut(re.sub(r"(?i)^error:\s*", "", text))
    return None


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _REASON_MAX else text[: _REASON_MAX - 1] + "…"
