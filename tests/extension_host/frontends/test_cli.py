"""The extensions command: output, --json, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from extension_host import Timeouts
from extension_host.frontends.cli import main
from helpers import CALC, Project

pytestmark = pytest.mark.subprocess


def test_scaffold_creates_a_project_extension_that_list_shows_running(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """scaffold then list --json: the new extension runs with its tool and hook."""
    assert project.cli("scaffold", "notes") == 0
    assert (project.root / ".github/extensions/notes/extension.py").is_file()
    capsys.readouterr()
    assert project.cli("list", "--json") == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["root"] == str(project.root.resolve())
    (extension,) = listing["extensions"]
    assert extension["id"] == "project:notes"
    assert extension["status"] == "running"
    assert extension["tools"] == ["notes_count_lines"]
    assert extension["hooks"] == ["on_pre_tool_use"]
    assert set(extension) >= {"id", "name", "source", "path", "status", "pid", "tools", "hooks", "error"}


def test_scaffold_user_puts_the_extension_in_the_user_home(project: Project) -> None:
    """--user writes under <home>/extensions."""
    assert project.cli("scaffold", "mine", "--user", "--template", "tool-only") == 0
    assert (project.home / "extensions/mine/extension.py").is_file()


@pytest.mark.parametrize("name", ["../x", "a/b", ""])
def test_scaffold_refuses_bad_names_with_exit_code_2(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A bad name is bad usage: exit 2 and the rule on stderr."""
    assert project.cli("scaffold", name) == 2
    assert "starts with a letter or digit" in capsys.readouterr().err


def test_scaffold_refuses_an_existing_folder_with_exit_code_2(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second scaffold of one name fails without touching the first."""
    assert project.cli("scaffold", "dup") == 0
    assert project.cli("scaffold", "dup") == 2
    assert "already exists" in capsys.readouterr().err


def test_list_prints_a_table_and_exits_1_when_an_extension_failed(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed extension shows its reason in the table, and the exit code says so."""
    project.add_extension("calc", CALC)
    project.add_extension("broken", "raise ImportError('no module named yaml')\n")
    assert project.cli("list") == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "PID", "TOOLS", "HOOKS", "NOTE"]
    assert any(line.startswith("project:calc") and "running" in line and "add" in line for line in lines)
    assert any("project:broken" in line and "ImportError: no module named yaml" in line for line in lines)


def test_call_prints_the_result_text_and_exits_0(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """extensions call add '{"a": 2, "b": 3}' prints 5."""
    project.add_extension("calc", CALC)
    assert project.cli("call", "add", '{"a": 2, "b": 3}') == 0
    assert capsys.readouterr().out.strip() == "5"


def test_call_json_reports_a_failure_and_exits_1(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """A failed call exits 1; --json carries result type, owner and the text naming the field."""
    project.add_extension("calc", CALC)
    assert project.cli("call", "add", '{"a": "x", "b": 1}', "--json") == 1
    result = json.loads(capsys.readouterr().out)
    assert result["result_type"] == "failure"
    assert result["owner"] == "project:calc"
    assert "'a'" in result["text_result_for_llm"]


def test_call_with_bad_json_or_unknown_tool_fails_clearly(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad JSON is usage (2); an unknown tool is a failure (1) listing what exists."""
    project.add_extension("calc", CALC)
    assert project.cli("call", "add", "{a: 1}") == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert project.cli("call", "add", "[1, 2]") == 2
    assert project.cli("call", "mul", "{}") == 1
    assert "no tool named 'mul'; available: add" in capsys.readouterr().err


def test_inspect_shows_tools_with_schemas_and_the_log_tail(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """inspect --json has the tool schema and the log; an unknown name exits 1."""
    project.add_extension("calc", CALC.replace("    join_session(", "    print('hello log')\n    join_session("))
    assert project.cli("inspect", "calc", "--json") == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["status"] == "running"
    (tool,) = detail["tools"]
    assert tool["parameters"]["required"] == ["a", "b"]
    assert "hello log" in detail["log_tail"]
    assert project.cli("inspect", "calc") == 0
    text = capsys.readouterr().out
    assert "add: Add two integers" in text and "| hello log" in text
    assert project.cli("inspect", "nope") == 1
    assert "no extension named 'nope'" in capsys.readouterr().err


def test_the_command_runs_as_a_module_and_the_demo_succeeds(tmp_path: object) -> None:
    """python -m extension_host demo scaffolds, starts, calls, and exits 0."""
    env = {**os.environ, "EXTENSION_HOST_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "extension_host", "demo"], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "README.md: 3 lines" in done.stdout
    assert "assistant.message          The README has 3 lines." in done.stdout
    assert "Everything worked." in done.stdout


@pytest.mark.parametrize("seconds", ["0", "-1", "soon", "nan", "inf"])
@pytest.mark.parametrize("after", [False, True], ids=["before the command", "after the command"])
def test_a_readiness_timeout_that_is_not_a_positive_number_of_seconds_is_a_usage_error(
    project: Project, capsys: pytest.CaptureFixture[str], seconds: str, after: bool
) -> None:
    """Refused by the parser, before any host is made: exit 2 and one line, no traceback."""
    args = ["list", "--readiness-timeout", seconds] if after else ["--readiness-timeout", seconds, "list"]
    assert project.cli(*args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f": argument --readiness-timeout: {seconds!r} is not a positive number of seconds (see " in err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Bare 'extensions' is bad usage."""
    assert main([]) == 2
    assert "scaffold" in capsys.readouterr().out


GUARDED = """
    from sdk_extension import join_session

    def shout(input, invocation):
        if "secret" in input.prompt:
            raise RuntimeError("refusing to look at secrets")
        return {"modified_prompt": input.prompt.upper(), "additional_context": "the user is shouting"}

    def no_deletes(input, invocation):
        if input.tool_name == "add" and input.tool_args.get("a") == 13:
            return {"permission_decision": "deny", "permission_decision_reason": "13 is unlucky"}
        return {"additional_context": "checked by guard"}

    join_session(hooks={"on_user_prompt_submitted": shout, "on_pre_tool_use": no_deletes})
"""


def test_prompt_prints_the_rewritten_prompt_and_context(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """extensions prompt runs the prompt hooks; a failing guard rejects with exit 1."""
    project.add_extension("guard", GUARDED)
    assert project.cli("prompt", "fix it") == 0
    out = capsys.readouterr().out
    assert out.startswith("FIX IT\n") and "the user is shouting" in out
    assert project.cli("prompt", "show the secret", "--json") == 1
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["rejected"] is True and outcome["rejected_by"] == "project:guard"
    assert "refusing to look at secrets" in outcome["reason"]


def test_call_verbose_shows_which_hook_decided(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """--verbose prints each hook's outcome on stderr; a denied call exits 1."""
    project.add_extension("calc", CALC)
    project.add_extension("guard", GUARDED)
    assert project.cli("call", "add", '{"a": 13, "b": 1}', "--verbose") == 1
    captured = capsys.readouterr()
    assert "[denied]" in captured.out and "13 is unlucky" in captured.out
    assert "project:guard: on_pre_tool_use ok, decided deny" in captured.err
    assert project.cli("call", "add", '{"a": 1, "b": 1}', "-v") == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "2"
    assert "checked by guard" in captured.err


def test_inspect_lists_the_hooks_an_extension_implements(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """inspect --json has the snake_case hook names."""
    project.add_extension("guard", GUARDED)
    assert project.cli("inspect", "guard", "--json") == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["hooks"] == ["on_user_prompt_submitted", "on_pre_tool_use"]
    assert detail["recent_hook_calls"] == []


PAINTER = r"""
    from sdk_extension import join_session, tool

    @tool(description="Answers with terminal controls")
    def paint() -> str:
        return "\x1b[2J\x1b]0;pwned\x07ok\r\nnext\x9b31m"

    join_session(tools=[paint])
"""
PAINTED = "\x1b[2J\x1b]0;pwned\x07ok\r\nnext\x9b31m"
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x9b")


def test_call_shows_a_results_controls_visibly_and_json_keeps_them_exact(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """A result that would clear the screen and set the title is printed as visible escapes;
    --json decodes to the exact text."""
    project.add_extension("painter", PAINTER)
    assert project.cli("call", "paint") == 0
    out = capsys.readouterr().out
    assert not [char for char in RAW_CONTROLS if char in out]
    assert out == "\\x1b[2J\\x1b]0;pwned\\x07ok\\r\nnext\\x9b31m\n"
    assert project.cli("call", "paint", "--json") == 0
    out = capsys.readouterr().out
    assert not [char for char in RAW_CONTROLS if char in out]
    assert json.loads(out)["text_result_for_llm"] == PAINTED


def test_list_shows_controls_in_an_import_error_and_a_folder_name_visibly(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exception message with colour codes, and a folder named with an escape sequence, are
    shown as escapes; the table keeps one line per extension."""
    project.add_extension("broken", r"raise RuntimeError('\x1b[31mboom')" + "\n")
    project.add_extension("evil\x1b[2J", CALC)
    assert project.cli("list") == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    lines = out.splitlines()
    assert len(lines) == 3
    assert any("project:broken" in line and "RuntimeError: \\x1b[31mboom" in line for line in lines)
    assert any(line.startswith("project:evil\\x1b[2J ") for line in lines)
    assert project.cli("list", "--json") == 1
    listing = json.loads(capsys.readouterr().out)
    ids = {extension["id"] for extension in listing["extensions"]}
    assert ids == {"project:broken", "project:evil\x1b[2J"}


def test_list_and_inspect_show_where_a_linked_extension_folder_really_is(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An extension folder that is a symbolic link: --json, the table and inspect name its target."""
    checkout = tmp_path / "checkout" / "calc"
    checkout.mkdir(parents=True)
    (checkout / "extension.py").write_text(textwrap.dedent(CALC))
    extensions = project.root / ".github" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "calc").symlink_to(checkout)
    assert project.cli("list", "--json") == 0
    (entry,) = json.loads(capsys.readouterr().out)["extensions"]
    assert (entry["status"], entry["link_target"]) == ("running", str(checkout.resolve()))
    assert project.cli("list") == 0
    assert f"links to {checkout.resolve()}" in capsys.readouterr().out
    assert project.cli("inspect", "calc") == 0
    assert f"-> {checkout.resolve()}" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["list"], ["call", "add"], ["trust"], ["scaffold", "x"], ["reload"]])
def test_a_root_that_is_not_a_folder_is_exit_2_naming_it_for_every_command(
    project: Project, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """Nothing runs, nothing is recorded or created: the root is checked before the command."""
    project.add_extension("calc", CALC)
    missing = project.root / "typo"
    assert main(["--root", str(missing), "--home", str(project.home), *command]) == 2
    err = capsys.readouterr().err
    assert err == f"error: project root {str(missing)!r} is not a folder; pass an existing project folder\n"
    assert not missing.exists() and not (project.home / "trust.json").exists()


def test_one_shot_commands_stop_extensions_with_the_short_ladder(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host a one-shot command starts gets ONE_SHOT_STOP_GRACE; dev keeps the default."""
    from extension_host import host as host_module
    from extension_host.frontends import one_shot
    from extension_host.launch.process import STOP_GRACE_SECONDS

    graces: list[float] = []
    real = host_module.ExtensionHost  # what the one-shot module imports when it starts a host

    def recording(*args: object, **kwargs: object) -> object:
        timeouts = kwargs.get("timeouts")
        graces.append(timeouts.stop_grace if isinstance(timeouts, Timeouts) else STOP_GRACE_SECONDS)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(host_module, "ExtensionHost", recording)
    project.add_extension("calc", CALC)
    assert project.cli("call", "add", '{"a": 1, "b": 2}') == 0
    assert graces == [one_shot.ONE_SHOT_STOP_GRACE] and one_shot.ONE_SHOT_STOP_GRACE < STOP_GRACE_SECONDS


def test_a_command_started_without_stdout_or_stderr_runs_without_a_traceback(project: Project) -> None:
    """``extensions list >&-`` and ``2>&-``: the interpreter has no such stream; nothing fails,
    and an error meant for stderr never lands on stdout."""
    project.add_extension("calc", CALC)
    base = project.command()
    no_stdout = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *base, "list"], capture_output=True, text=True, timeout=60
    )
    assert no_stdout.returncode == 0
    # a slow start shows the status line on stderr; nothing else may land there
    assert all(line.startswith("starting ") for line in no_stdout.stderr.splitlines()), no_stdout.stderr
    no_stderr = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", *base, "call", "nope"], capture_output=True, text=True, timeout=60
    )
    assert no_stderr.returncode == 1 and no_stderr.stdout == ""


def test_arguments_with_lone_surrogates_are_printed_escaped(project: Project) -> None:
    """A name that is not UTF-8 on the command line (Python decodes it to a lone surrogate)
    is printed as an escape in results and errors alike, never a UnicodeEncodeError."""
    project.add_extension("calc", CALC)
    base = project.command()
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    cases: list[tuple[list[str | bytes], int, str, str]] = [
        (["prompt", b"caf\xe9"], 0, "stdout", "caf\\udce9"),
        (["call", b"add\xff"], 1, "stderr", "no tool named 'add\\udcff'"),
        (["inspect", b"calc\xff"], 1, "stderr", "no extension named 'calc\\udcff'"),
        (["--root", b"/nowhere\xff", "list"], 2, "stderr", "/nowhere\\udcff"),
    ]
    for args, code, where, shown in cases:
        argv = [os.fsencode(part) if isinstance(part, str) else part for part in [*base, *args]]
        done = subprocess.run(argv, capture_output=True, timeout=60, env=env)
        assert done.returncode == code, done.stderr
        assert shown in getattr(done, where).decode("utf-8"), (args, done)
        assert b"Traceback" not in done.stderr
