"""Decide whether a shell command an agent wants to run is one of the known disasters.

The pipeline: :func:`commands_in_tool_call` finds command strings in a tool call;
:func:`parse_commands` turns one string into :class:`Command` values (one per simple command,
splitting ``;``, ``&&``, ``||``, ``|``, newlines and ``&``, unwrapping ``sudo``/``env``/...,
and recursing into ``bash -c '...'``, ``eval``, ``$(...)`` and ``echo ... | sh``); the
:class:`Rule` table (:data:`BUILTIN_RULES` plus the project's ``shell_guard.json``) is then
checked against each of them by :func:`check_command`.

This is a seatbelt against accidents, not a sandbox: a determined process can always write a
command that no pattern recognises. Everything here is pure except :class:`ConfigFile` (which
stats and reads one file) and :func:`current_git_branch` (which runs git).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

__all__ = [
    "BUILTIN_RULES",
    "CONFIG_FILE_NAME",
    "Command",
    "Config",
    "ConfigError",
    "ConfigFile",
    "Redirect",
    "Rule",
    "Verdict",
    "check_command",
    "check_tool_call",
    "commands_in_tool_call",
    "current_git_branch",
    "is_shell_tool",
    "load_config",
    "parse_commands",
    "parse_config",
]

CONFIG_FILE_NAME: Final = "shell_guard.json"
MAX_NESTING: Final = 8
"""How deep ``bash -c "eval '...'"``-style wrappers are followed; real commands stay far below."""

BranchLookup = Callable[[], "str | None"]
"""Returns the current git branch, or ``None`` when it cannot be known."""

# -- parsed commands -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection of a simple command, e.g. ``>`` to ``/dev/sda``."""

    operator: str
    target: str


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command, as the shell would run it.

    ``words`` is what was written (quotes removed, redirections left out); ``argv`` is the
    command that really runs once ``sudo``, ``env``, ``nohup``, ``VAR=value`` and the like are
    stripped. ``upstream`` are the commands piped into this one; ``executes_output`` is true
    when the shell runs this command's output as code (``$(cmd)`` in command position, or
    ``bash <(cmd)``).
    """

    words: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    upstream: tuple[Command, ...] = ()
    executes_output: bool = False
    argv: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "argv", _unwrap(self.words))

    @property
    def program(self) -> str:
        """The base name of the program that runs (``rm`` for ``sudo /bin/rm``), or ``""``."""
        return posixpath.basename(self.argv[0]) if self.argv else ""

    @property
    def args(self) -> tuple[str, ...]:
        """The program's arguments."""
        return self.argv[1:]

    @property
    def text(self) -> str:
        """The command as written, words joined by single spaces (what user patterns see)."""
        return " ".join(self.words)

    @property
    def unwrapped_text(self) -> str:
        """The command without its wrappers, words joined by single spaces."""
        return " ".join(self.argv)

    @property
    def display(self) -> str:
        """The pipeline up to this command with its redirections, for messages."""
        own = " ".join([*self.words, *(f"{r.operator} {r.target}" for r in self.redirects)])
        return " | ".join([*(up.text for up in self.upstream), own])


# -- rules ---------------------------------------------------------------------------------

Scope = Literal["command", "text"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One way a command is refused.

    A rule either has a ``check`` over a parsed :class:`Command`, or ``patterns``: regular
    expressions searched in each simple command (``scope="command"``, written and unwrapped
    forms) or in the whole command text (``scope="text"``, quotes and all).
    """

    name: str
    reason: str
    check: Callable[[Command, BranchLookup | None], bool] | None = None
    patterns: tuple[re.Pattern[str], ...] = ()
    scope: Scope = "command"

    def matches_command(self, command: Command, branch: BranchLookup | None = None) -> bool:
        """True when this command-scope rule refuses ``command``."""
        if self.scope != "command":
            return False
        if self.check is not None and self.check(command, branch):
            return True
        return any(p.search(command.text) or p.search(command.unwrapped_text) for p in self.patterns)

    def matches_text(self, text: str) -> bool:
        """True when this text-scope rule refuses the command text ``text``."""
        return self.scope == "text" and any(p.search(text) for p in self.patterns)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a command is refused: the rule and the part of the command that broke it."""

    rule: Rule
    offending: str

    @property
    def reason(self) -> str:
        """The sentence the agent and the user see."""
        shown = self.offending if len(self.offending) <= 160 else self.offending[:157] + "..."
        return f"shell_guard rule '{self.rule.name}': {self.rule.reason} (blocked: {shown!r})"


@dataclass(frozen=True, slots=True)
class Config:
    """The project's additions: extra deny rules and allow patterns for simple commands."""

    deny: tuple[Rule, ...] = ()
    allow: tuple[re.Pattern[str], ...] = ()

    def allows(self, command: Command) -> bool:
        """True when an allow pattern exempts this simple command from every command rule."""
        return any(p.search(command.text) or p.search(command.unwrapped_text) for p in self.allow)


EMPTY_CONFIG: Final = Config()

# -- the built-in rules --------------------------------------------------------------------

SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash"})
DOWNLOADERS: Final = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh"})
PROTECTED_BRANCHES: Final = frozenset({"main", "master"})
_INTERPRETER: Final = re.compile(
    r"^(?:python[\d.]*|pypy[\d.]*|perl[\d.]*|ruby[\d.]*|node|nodejs|deno|bun|php[\d.]*|pwsh|powershell)$"
)
# Options after which an interpreter takes its program from an argument, not from stdin.
_CODE_OPTIONS: Final = {
    "python": "cm",
    "pypy": "cm",
    "perl": "eE",
    "ruby": "eE",
    "node": "ep",
    "nodejs": "ep",
    "php": "rf",
}
_SYSTEM_DIRS: Final = frozenset(
    [
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
        "/Applications",
        "/Library",
        "/System",
        "/Users",
        "/Volumes",
        "/private",
    ]
)
_HOME_FORMS: Final = frozenset({"~", "$HOME", "${HOME}"})
_SAFE_DEVICES: Final = re.compile(
    r"^/dev/(?:null|zero|full|random|urandom|stdin|stdout|stderr|tty|ptmx|console"
    r"|(?:fd|pts|shm|tcp|udp|mqueue)/.*)$"
)
_WRITE_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


def _short_flags(args: Iterable[str]) -> set[str]:
    """Letters of every ``-abc`` cluster before ``--`` (long options are not included)."""
    letters: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters.update(arg[1:])
    return letters


def _long_flags(args: Iterable[str]) -> set[str]:
    """Every ``--option`` before ``--``, without any ``=value``."""
    found: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--") and len(arg) > 2:
            found.add(arg.split("=", 1)[0])
    return found


def _operands(args: Sequence[str]) -> list[str]:
    """Arguments that are not options (everything after ``--`` counts)."""
    operands: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
    return operands


def _normalize_path(arg: str) -> str:
    path = arg.replace("${HOME}", "$HOME")
    path = re.sub(r"/{2,}", "/", path)
    # Removing "dir/*" or "dir/." empties dir, so they are judged as dir itself.
    while len(path) > 1 and (path.endswith("/*") or path.endswith("/.") or path.endswith("/")):
        path = path[:-2] if path.endswith(("/*", "/.")) else path[:-1]
    if path == "":
        return "/"
    normalized = posixpath.normpath(path)
    return "/" if normalized == "//" else normalized


def _is_root_like(arg: str) -> bool:
    """``/``, a top-level system folder, or a home folder (``~``, ``$HOME``, ``~user``)."""
    path = _normalize_path(arg)
    if path in {"/", *_SYSTEM_DIRS} or path in _HOME_FORMS:
        return True
    return bool(re.fullmatch(r"~[A-Za-z0-9._-]*", path)) or bool(re.fullmatch(r"/(?:home|Users)/[^/]+", path))


def _is_everything_here(arg: str) -> bool:
    """``*``, ``.``, ``..`` (or ``../..``), ``.*``: the working folder or what is above it."""
    path = _normalize_path(arg)
    return path in {"*", ".", "..", ".*", "./*"} or bool(re.fullmatch(r"\.\.(?:/\.\.)*", path))


def _rm_dangerous(command: Command, _branch: BranchLookup | None) -> bool:
    if command.program != "rm":
        return False
    args = command.args
    if "--no-preserve-root" in _long_flags(args):
        return True
    recursive = bool({"r", "R"} & _short_flags(args)) or "--recursive" in _long_flags(args)
    return recursive and any(_is_root_like(a) or _is_everything_here(a) for a in _operands(args))


def _chmod_dangerous(command: Command, _branch: BranchLookup | None) -> bool:
    if command.program not in {"chmod", "chown", "chgrp"}:
        return False
    # Lower-case -r is chmod's "remove read permission", not recursion.
    recursive = "R" in _short_flags(command.args) or "--recursive" in _long_flags(command.args)
    return recursive and any(_is_root_like(a) for a in _operands(command.args))


def _is_device(path: str) -> bool:
    return path.startswith("/dev/") and not _SAFE_DEVICES.match(path)


def _dd_to_device(command: Command, _branch: BranchLookup | None) -> bool:
    return command.program == "dd" and any(a.startswith("of=") and _is_device(a[3:]) for a in command.args)


def _writes_device(command: Command, _branch: BranchLookup | None) -> bool:
    if any(r.operator in _WRITE_REDIRECTS and _is_device(r.target) for r in command.redirects):
        return True
    operands = _operands(command.args)
    if command.program in {"tee", "shred", "wipe"}:
        return any(_is_device(a) for a in operands)
    if command.program in {"cp", "mv", "install"} and len(operands) >= 2:
        return _is_device(operands[-1])
    return False


def _formats_disk(command: Command, _branch: BranchLookup | None) -> bool:
    return bool(re.fullmatch(r"mkfs(?:\..+)?|mke2fs|mkswap|mkdosfs|mkntfs|wipefs|newfs(?:_.+)?", command.program))


def _shuts_down(command: Command, _branch: BranchLookup | None) -> bool:
    program, args = command.program, command.args
    if program == "shutdown":
        return "c" not in _short_flags(args)  # shutdown -c cancels a pending shutdown
    if program in {"reboot", "halt", "poweroff", "kexec"}:
        return True
    if program in {"init", "telinit"}:
        return bool(set(_operands(args)) & {"0", "6"})
    if program in {"systemctl", "loginctl"}:
        verbs = _operands(args)
        return bool(verbs) and verbs[0] in {"poweroff", "reboot", "halt", "kexec", "soft-reboot"}
    return False


def _reads_program_from_stdin(command: Command) -> bool:
    program, args = command.program, command.args
    family = re.sub(r"[\d.]+$", "", program)
    if program in SHELLS:
        flags = _short_flags(args)
        if "s" in flags:
            return True
        if "c" in flags or "--command" in _long_flags(args):
            return False
        return not _shell_script_operand(args)
    if not _INTERPRETER.match(program):
        return False
    code_options = _CODE_OPTIONS.get(family, "c")
    if set(code_options) & _short_flags(args) or {"--eval", "--print", "--command"} & _long_flags(args):
        return False
    operands = _operands(args)
    return not operands or operands[0] == "-"


def _shell_script_operand(args: Sequence[str]) -> str | None:
    skip_next = False
    for index, arg in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if arg == "--":
            return args[index + 1] if index + 1 < len(args) else None
        if arg in {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}:
            skip_next = True  # these options take the next word as their value
            continue
        if arg.startswith(("-", "+")) and arg not in {"-", "+"}:
            continue
        return None if arg == "-" else arg
    return None


def _download_executed(command: Command, _branch: BranchLookup | None) -> bool:
    if command.program in DOWNLOADERS and command.executes_output:
        return True
    return _reads_program_from_stdin(command) and any(up.program in DOWNLOADERS for up in command.upstream)


_GIT_OPTIONS_WITH_VALUE: Final = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--exec-path"}
)
_PUSH_OPTIONS_WITH_VALUE: Final = frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"})


def _git_subcommand(args: Sequence[str]) -> tuple[str, list[str]]:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _GIT_OPTIONS_WITH_VALUE else 1
    if index >= len(args):
        return "", []
    return args[index], list(args[index + 1 :])


def _git_force_push_protected(command: Command, branch: BranchLookup | None) -> bool:
    if command.program != "git":
        return False
    verb, args = _git_subcommand(command.args)
    if verb != "push":
        return False
    positional: list[str] = []
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
        elif arg in _PUSH_OPTIONS_WITH_VALUE:
            skip_next = True
        elif not arg.startswith("-"):
            positional.append(arg)
    short, long = _short_flags(args), _long_flags(args)
    # --force-with-lease is safer than --force, but it still rewrites main for everyone.
    forced = "f" in short or bool(long & {"--force", "--force-with-lease", "--mirror"})
    deleting = "d" in short or "--delete" in long
    refspecs = positional[1:]
    if not refspecs:
        if long & {"--mirror"} or (forced and long & {"--all", "--branches"}):
            return True
        if not (forced or deleting) or branch is None:
            return False
        current = branch()
        return current in PROTECTED_BRANCHES
    for refspec in refspecs:
        plus = refspec.startswith("+")
        source, colon, destination = refspec.lstrip("+").partition(":")
        target = destination if colon else source
        # "git push origin :main" deletes main
        deleting_this = True if colon and not source else deleting
        if target == "HEAD" and branch is not None:
            target = branch() or ""
        target = target.removeprefix("refs/heads/")
        if target in PROTECTED_BRANCHES and (forced or plus or deleting_this):
            return True
    return False


_FORK_BOMBS: Final = (
    # name(){ name|name& }  -- the classic is :(){ :|:& };:
    re.compile(r"(?P<name>[^\s(){}|&;<>'\"]+)\s*\(\s*\)\s*\{[^}]*?(?P=name)\s*\|\s*(?P=name)\s*&"),
    re.compile(r"\bfunction\s+(?P<name>[^\s(){}|&;<>'\"]+)\s*(?:\(\s*\))?\s*\{[^}]*?(?P=name)\s*\|\s*(?P=name)\s*&"),
    re.compile(r"%0\s*\|\s*%0"),  # the Windows batch form
)

BUILTIN_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "rm-recursive-root",
        "recursive rm of /, a system folder, a home folder, '*', '.', or '..' destroys far more than intended",
        check=_rm_dangerous,
    ),
    Rule(
        "fork-bomb", "a fork bomb exhausts the process table and hangs the machine", patterns=_FORK_BOMBS, scope="text"
    ),
    Rule("mkfs", "formatting or wiping a file system destroys every file on it", check=_formats_disk),
    Rule("dd-to-device", "dd writing to a device overwrites the disk below the file system", check=_dd_to_device),
    Rule(
        "write-to-device",
        "writing to a device file such as /dev/sda overwrites the disk below the file system",
        check=_writes_device,
    ),
    Rule(
        "chmod-recursive-root",
        "recursively changing permissions or owners of /, a system folder or a home folder breaks the system",
        check=_chmod_dangerous,
    ),
    Rule(
        "download-piped-to-shell",
        "running code straight from the network (curl|sh, wget|bash, bash <(curl ...)) executes it unreviewed; "
        "download it to a file and inspect it first",
        check=_download_executed,
    ),
    Rule(
        "git-force-push-protected",
        "force-pushing to (or deleting) main/master rewrites history everyone else builds on",
        check=_git_force_push_protected,
    ),
    Rule(
        "shutdown-reboot",
        "shutting down or rebooting the machine ends the session and everyone else's work",
        check=_shuts_down,
    ),
)
"""The rules that always apply. ``git reset --hard`` and ``git clean`` are deliberately not
here: they are local, routine in agent workflows, and a project can deny them in its config."""


# -- tokenizing and parsing ----------------------------------------------------------------

_PUNCTUATION: Final = "();<>|&\n"
_OPERATOR: Final = re.compile(r"&&|\|\||;;&?|;&|\|&|&>>|&>|>>|>\||>&|<&|<<<|<<-|<<|<>|<\(|>\(|[;&|()<>\n]")
_SEPARATORS: Final = frozenset({";", "\n", "&", "&&", "||", ";;", ";&", ";;&"})
_PIPES: Final = frozenset({"|", "|&"})
_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<", "<<", "<<-", "<<<", "<>", ">&", "<&"})


def _shlex_tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"  # newlines separate commands, so they are punctuation here
    lexer.commenters = ""  # '#' is handled by the parser: shlex would swallow the newline too
    return list(lexer)


_BACKTICKS: Final = re.compile(r"(?<!\\)`([^`]*)`")


def _tokenize(text: str) -> list[str]:
    """Shell tokens of ``text``; unbalanced quotes are closed at the end, as the agent meant."""
    text = text.replace("\\\n", "")
    # Backticks are the old spelling of $( ); shlex would cut them up with the words.
    text = _BACKTICKS.sub(r"$(\1)", text)
    for suffix in ("", '"', "'", "\"'", "'\"", "\\"):
        try:
            return _shlex_tokens(text + suffix)
        except ValueError:
            continue
    # Nothing balanced it: drop the quotes, so every word is still looked at.
    try:
        return _shlex_tokens(re.sub(r"[\"'\\]", " ", text))
    except ValueError:
        return text.split()


def _is_operator(token: str) -> bool:
    return bool(token) and all(ch in _PUNCTUATION for ch in token)


def _split_operators(token: str) -> list[str]:
    return _OPERATOR.findall(token)


class _Parser:
    """Turns tokens into Commands; nested ``$( )``, ``<( )`` and ``( )`` recurse."""

    def __init__(self, tokens: list[str]) -> None:
        self.items: list[str] = []
        for token in tokens:
            self.items.extend(_split_operators(token) if _is_operator(token) else [token])
        self.position = 0
        self.found: list[Command] = []

    def parse(self, executes_output: bool = False, nested: bool = False) -> None:
        """Read until the end (or, when ``nested``, the closing ``)``), adding every simple
        command to ``found``."""
        words: list[str] = []
        redirects: list[Redirect] = []
        pipeline: list[Command] = []
        in_comment = False
        pending_redirect: str | None = None

        def finish(keep_pipeline: bool) -> None:
            nonlocal words, redirects, in_comment, pending_redirect
            if words or redirects:
                command = Command(tuple(words), tuple(redirects), tuple(pipeline), executes_output)
                self.found.append(command)
                pipeline.append(command)
            if not keep_pipeline:
                pipeline.clear()
            words, redirects, in_comment, pending_redirect = [], [], False, None

        while self.position < len(self.items):
            item = self.items[self.position]
            self.position += 1
            if not _is_operator(item):
                if in_comment:
                    continue
                if pending_redirect is not None:
                    redirects.append(Redirect(pending_redirect, item))
                    pending_redirect = None
                elif item.startswith("#"):
                    in_comment = True
                else:
                    words.append(item)
                continue
            if item in _SEPARATORS:
                finish(keep_pipeline=False)
            elif item in _PIPES:
                finish(keep_pipeline=True)
            elif item in _REDIRECTS:
                # "2>file": the fd number was split off as a word; it is not an argument.
                if words and words[-1].isdigit():
                    words.pop()
                pending_redirect = item
            elif item == ")":
                if nested:
                    break
                # A stray ")" (or a quoted one shlex cannot tell apart) must not end the
                # reading early and hide what follows it.
                finish(keep_pipeline=False)
            elif item == "<(" or item == ">(":
                runs_it = item == "<(" and _runs_code_from_file(words)
                self.parse(executes_output=executes_output or runs_it, nested=True)
            elif item == "(":
                if words and words[-1].endswith("$"):
                    # "$(" -- a command substitution. Standing alone where a command goes, its
                    # output is run; glued to a word ("x=$(...)", "v$(...)") it is only data.
                    prefix = words.pop()[:-1]
                    if prefix:
                        words.append(prefix)
                    in_command_position = not prefix and not _unwrap(tuple(words))
                    self.parse(executes_output=executes_output or in_command_position, nested=True)
                else:
                    finish(keep_pipeline=False)  # a subshell, or "name()" of a function
                    self.parse(executes_output=executes_output, nested=True)
        finish(keep_pipeline=False)


def _runs_code_from_file(words: Sequence[str]) -> bool:
    argv = _unwrap(tuple(words))
    if not argv:
        return False
    program = posixpath.basename(argv[0])
    return program in SHELLS or program in {"source", "."} or bool(_INTERPRETER.match(program))


_SUBSTITUTION_START: Final = re.compile(r"\$\(|`")


def _substitutions(word: str) -> list[str]:
    """Bodies of ``$(...)`` and backtick substitutions left inside a (quoted) word."""
    bodies: list[str] = []
    index = 0
    while (match := _SUBSTITUTION_START.search(word, index)) is not None:
        start = match.end()
        if match.group() == "`":
            end = word.find("`", start)
            end = len(word) if end < 0 else end
            bodies.append(word[start:end])
            index = end + 1
            continue
        depth, end = 1, start
        while end < len(word) and depth:
            depth += {"(": 1, ")": -1}.get(word[end], 0)
            end += 1
        bodies.append(word[start : end - 1 if depth == 0 else end])
        index = end
    return bodies


def _payloads(command: Command) -> list[tuple[str, bool]]:
    """Command text that ``command`` hands to a shell to run, and whether its output is run too."""
    found: list[tuple[str, bool]] = []
    program, args = command.program, command.args
    if program in SHELLS and "c" in _short_flags(args):
        payload = _shell_script_operand(args)
        if payload is not None:
            found.append((payload, False))
    elif program in SHELLS and "--command" in _long_flags(args):
        found.extend((a.split("=", 1)[1], False) for a in args if a.startswith("--command="))
    elif program == "su":
        for index, arg in enumerate(args):
            if arg in {"-c", "--command"} and index + 1 < len(args):
                found.append((args[index + 1], False))
            elif arg.startswith("--command="):
                found.append((arg.split("=", 1)[1], False))
    wrappers = command.words[: len(command.words) - len(command.argv)]
    if "eval" in wrappers and command.argv:
        # eval joins its words and runs the result as shell text.
        found.append((" ".join(command.argv), False))
    if program in SHELLS:
        # "echo 'rm -rf /' | sh" and "sh <<< 'rm -rf /'" run the text as code.
        if _reads_program_from_stdin(command):
            for up in command.upstream:
                if up.program in {"echo", "printf"}:
                    text = " ".join(a for a in up.args if not re.fullmatch(r"-[neE]+", a))
                    found.append((text.replace("\\n", "\n") if up.program == "printf" else text, False))
        found.extend((r.target, False) for r in command.redirects if r.operator == "<<<")
    # Substitutions the tokenizer kept inside quoted words still run.
    for index, word in enumerate(command.argv):
        for body in _substitutions(word):
            # A quoted "$(cmd)" that is the command itself, or the code argument of an
            # interpreter (python -c "$(cmd)"), runs cmd's output.
            whole = word in {f"$({body})", f"`{body}`"}
            found.append((body, whole and (index == 0 or _is_code_option(command, index - 1))))
    for word in command.words[: len(command.words) - len(command.argv)]:
        found.extend((body, False) for body in _substitutions(word))
    for redirect in command.redirects:
        found.extend((body, False) for body in _substitutions(redirect.target))
    return found


def _is_code_option(command: Command, index: int) -> bool:
    option = command.argv[index]
    if not (command.program in SHELLS or _INTERPRETER.match(command.program)):
        return False
    if option in {"--eval", "--command", "-Command", "--print"}:
        return True
    return option.startswith("-") and not option.startswith("--") and option[-1] in "ceEpr"


def parse_commands(text: str, *, executes_output: bool = False, _depth: int = 0) -> list[Command]:
    """Every simple command ``text`` would run, including those inside ``bash -c``, ``eval``,
    ``$(...)``, backticks and ``echo ... | sh``, in order."""
    parser = _Parser(_tokenize(text))
    parser.parse(executes_output)
    commands: list[Command] = []
    for command in parser.found:
        commands.append(command)
        if _depth < MAX_NESTING:
            for payload, runs_output in _payloads(command):
                commands.extend(parse_commands(payload, executes_output=runs_output, _depth=_depth + 1))
    return commands


def _source_texts(text: str, _depth: int = 0) -> list[str]:
    """``text`` and every command text nested inside it (for the text-scope rules)."""
    texts = [text]
    if _depth < MAX_NESTING:
        parser = _Parser(_tokenize(text))
        parser.parse()
        for command in parser.found:
            for payload, _ in _payloads(command):
                texts.extend(_source_texts(payload, _depth + 1))
    return texts


# -- unwrapping sudo, env and friends ------------------------------------------------------

# Wrapper -> its options that take the next word as a value.
_WRAPPERS: Final[Mapping[str, frozenset[str]]] = {
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-T",
            "-U",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--chdir",
            "--role",
            "--type",
            "--close-from",
            "--other-user",
            "--command-timeout",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "eval": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "busybox": frozenset(),
    "unbuffer": frozenset(),
    "chronic": frozenset(),
    "xcrun": frozenset(),
}
_TAKES_OPERAND: Final = frozenset({"timeout"})  # timeout DURATION COMMAND
_KEYWORDS: Final = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "fi", "done", "esac"}
)
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _unwrap(words: tuple[str, ...]) -> tuple[str, ...]:
    index = 0
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word) or word in _KEYWORDS:
            index += 1
            continue
        wrapper = posixpath.basename(word)
        if wrapper not in _WRAPPERS:
            break
        if wrapper == "command" and index + 1 < len(words) and words[index + 1] in {"-v", "-V"}:
            return ()  # "command -v rm" only looks rm up
        index += 1
        with_value = _WRAPPERS[wrapper]
        while index < len(words) and words[index].startswith("-") and words[index] != "-":
            option = words[index]
            index += 1
            if option == "--":
                break
            if option in with_value:
                index += 1
        if wrapper == "env":
            while index < len(words) and _ASSIGNMENT.match(words[index]):
                index += 1
        if wrapper in _TAKES_OPERAND:
            index += 1
    return words[index:]


# -- tool calls ----------------------------------------------------------------------------

_SHELL_TOOL_WORDS: Final = frozenset(
    {"bash", "sh", "zsh", "shell", "powershell", "pwsh", "terminal", "exec", "execute", "cmd", "console"}
)
_SHELL_TOOL_KEYS: Final = ("command", "cmd", "script", "input", "commands")
_ANY_TOOL_KEYS: Final = ("command", "cmd")


def is_shell_tool(tool_name: str) -> bool:
    """True for tools whose name says they run shell commands (bash, run_shell, runInTerminal...)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", tool_name).lower()
    return any(part in _SHELL_TOOL_WORDS for part in re.findall(r"[a-z0-9]+", spaced))


def _as_commands(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        # An argv list runs without a shell; quoting it gives the same words back.
        return [shlex.join(value)]
    return []


def commands_in_tool_call(tool_name: str, tool_args: Any) -> list[str]:
    """The command strings a tool call would run: the ``command``/``cmd`` argument of any tool,
    and also ``script``/``input``/``commands`` (or the bare string argument) of shell tools."""
    shell_tool = is_shell_tool(tool_name)
    if isinstance(tool_args, str):
        try:
            decoded = json.loads(tool_args)
        except ValueError:
            return [tool_args] if shell_tool and tool_args.strip() else []
        tool_args = decoded
    if not isinstance(tool_args, dict):
        return []
    keys = _SHELL_TOOL_KEYS if shell_tool else _ANY_TOOL_KEYS
    found: list[str] = []
    for key in keys:
        value = tool_args.get(key)
        if key == "commands" and isinstance(value, list):
            for item in value:
                found.extend(_as_commands(item))
        else:
            found.extend(_as_commands(value))
    return found


# -- deciding ------------------------------------------------------------------------------


def check_command(
    text: str,
    config: Config = EMPTY_CONFIG,
    *,
    rules: Sequence[Rule] = BUILTIN_RULES,
    current_branch: BranchLookup | None = None,
) -> Verdict | None:
    """The first rule ``text`` breaks, or ``None`` when no rule objects.

    ``current_branch`` is asked (at most once per push) when a force push names no branch.
    Allow patterns exempt single simple commands from command-scope rules; they never exempt
    text-scope rules such as the fork bomb.
    """
    all_rules = (*rules, *config.deny)
    text_rules = [rule for rule in all_rules if rule.scope == "text"]
    if text_rules:
        for source in _source_texts(text):
            for rule in text_rules:
                if rule.matches_text(source):
                    return Verdict(rule, source.strip())
    command_rules = [rule for rule in all_rules if rule.scope == "command"]
    branch = _remember(current_branch) if current_branch is not None else None
    for command in parse_commands(text):
        if config.allows(command):
            continue
        for rule in command_rules:
            if rule.matches_command(command, branch):
                return Verdict(rule, command.display)
    return None


def check_tool_call(
    tool_name: str,
    tool_args: Any,
    config: Config = EMPTY_CONFIG,
    *,
    current_branch: BranchLookup | None = None,
) -> dict[str, str] | None:
    """The ``on_pre_tool_use`` answer for a tool call: a deny with its reason, or ``None``."""
    for text in commands_in_tool_call(tool_name, tool_args):
        verdict = check_command(text, config, current_branch=current_branch)
        if verdict is not None:
            return {"permission_decision": "deny", "permission_decision_reason": verdict.reason}
    return None


def _remember(lookup: BranchLookup) -> BranchLookup:
    cache: list[str | None] = []

    def once() -> str | None:
        if not cache:
            cache.append(lookup())
        return cache[0]

    return once


def current_git_branch(cwd: str | Path, timeout: float = 5.0) -> str | None:
    """The branch checked out in ``cwd``, or ``None`` (detached, not a repo, no git, too slow)."""
    try:
        completed = subprocess.run(
            ["git", "symbolic-ref", "--quiet", "--short", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.strip() or None


# -- configuration -------------------------------------------------------------------------


class ConfigError(ValueError):
    """``shell_guard.json`` cannot be used; the message says where and why."""


_CONFIG_KEYS: Final = ("deny", "allow")
_DENY_KEYS: Final = ("pattern", "reason", "name", "scope")


def _compile(pattern: Any, where: str) -> re.Pattern[str]:
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError(f"{where} must be a non-empty string (a regular expression)")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{where} is not a valid regular expression ({exc}): {pattern!r}") from None


def parse_config(text: str, source: str = CONFIG_FILE_NAME) -> Config:
    """Read the JSON text of a config file.

    Shape: ``{"deny": [{"pattern": "regex", "reason": "...", "name": "...", "scope":
    "command"|"text"}], "allow": ["regex", ...]}``; both keys are optional.

    Raises:
        ConfigError: naming ``source`` and what is wrong with it.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be an object with 'deny' and/or 'allow'")
    unknown = [key for key in data if key not in _CONFIG_KEYS]
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (valid keys: {', '.join(_CONFIG_KEYS)})")
    deny_items = data.get("deny", [])
    allow_items = data.get("allow", [])
    if not isinstance(deny_items, list):
        raise ConfigError(f'{source}: \'deny\' must be a list of {{"pattern": ..., "reason": ...}} objects')
    if not isinstance(allow_items, list):
        raise ConfigError(f"{source}: 'allow' must be a list of regular expressions")
    deny: list[Rule] = []
    for index, item in enumerate(deny_items):
        where = f"{source}: deny[{index}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{where} must be an object with 'pattern' and 'reason'")
        extra = [key for key in item if key not in _DENY_KEYS]
        if extra:
            raise ConfigError(f"{where}: unknown key {extra[0]!r} (valid keys: {', '.join(_DENY_KEYS)})")
        pattern = _compile(item.get("pattern"), f"{where}.pattern")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{where}.reason must be a non-empty string (it is shown when a command is blocked)")
        name = item.get("name", f"{CONFIG_FILE_NAME}:deny[{index}]")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.name must be a non-empty string")
        scope = item.get("scope", "command")
        if scope not in ("command", "text"):
            raise ConfigError(f"{where}.scope must be 'command' or 'text', not {scope!r}")
        deny.append(Rule(name, reason.strip(), patterns=(pattern,), scope=scope))
    allow = tuple(_compile(item, f"{source}: allow[{index}]") for index, item in enumerate(allow_items))
    return Config(tuple(deny), allow)


def load_config(path: str | Path) -> Config:
    """Read a config file; a missing file is the empty config.

    Raises:
        ConfigError: the file exists but cannot be read or used.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return EMPTY_CONFIG
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    return parse_config(text, str(path))


class ConfigFile:
    """A config file read again whenever it changes, so edits apply without a restart."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, int] | None = None
        self._read = False
        self._config: Config = EMPTY_CONFIG

    def get(self) -> tuple[Config, str | None]:
        """The config now in force, and a warning the first time a broken version is seen.

        A broken file leaves only the built-in rules in force until it is fixed.
        """
        try:
            info = os.stat(self.path)
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = None
        if self._read and stamp == self._stamp:
            return self._config, None
        self._read, self._stamp = True, stamp
        try:
            self._config = load_config(self.path)
        except ConfigError as exc:
            self._config = EMPTY_CONFIG
            return self._config, f"shell_guard: {exc}; ignoring the file until it is fixed (built-in rules still apply)"
        return self._config, None
