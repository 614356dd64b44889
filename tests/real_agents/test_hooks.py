"""Claude Code and Gemini CLI, the real programs, guarded and informed by the project's extensions
through ``extensions hook install`` (each test once per agent, unless it is about one).

Each test writes the extensions it needs, installs the hooks as a user would, and runs the agent
headless against a scripted model; what reached the model (every request body) and the agent's
own output are the evidence.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal

import pytest

from helpers import wait_for_exit
from real_agents.agents import Agent, assert_finished, for_agents, printing
from real_agents.extensions import DENY_ENV, DENY_REASON, MASKED, MASKER, REDACTED, REDACTOR, counter, record_to
from real_agents.models import Call, Say, ScriptedModel, Turn
from real_agents.programs import skip_without_node
from real_agents.runner import EXTENSIONS_BIN, SECRET, AgentRun, Workspace

pytestmark = pytest.mark.real_agent
skip_without_node()


def show_env(agent: Agent) -> list[Turn]:
    """The model asks to read ``.env``, then ends its turn."""
    return [agent.shell("cat .env"), Say("done")]


@for_agents()
def test_installing_the_hooks_twice_changes_nothing_and_each_hook_runs_once_per_call(
    agent: Agent, workspace: Workspace
) -> None:
    calls = workspace.root / "calls.txt"
    workspace.add_extension("counter", counter(calls))
    first = agent.install_hooks(workspace)
    settings = workspace.project / f".{agent.name}" / "settings.json"
    written = settings.read_text()
    second = agent.install_hooks(workspace)
    assert "added hooks" in first and "nothing changed" in second, (first, second)
    assert settings.read_text() == written

    command, output = printing("once")
    with agent.model([agent.shell(command), Say("done")]) as model:
        run = agent.run(workspace, model, "run the command", *agent.shell_allowed)
    assert_finished(run, model)
    assert output in model.bodies(), model.log()
    assert calls.read_text().splitlines() == [f"pre {agent.shell_tool}", f"post {agent.shell_tool}"]


@for_agents()
def test_a_denied_call_does_not_run_and_only_the_reason_reaches_the_model(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension("guard", DENY_ENV)
    agent.install_hooks(workspace)
    with agent.model(show_env(agent)) as model:
        run = agent.run(workspace, model, "show me the .env file", *agent.shell_allowed)
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any(DENY_REASON in result for result in model.tool_results()), model.log()


@for_agents()
def test_a_hook_that_allows_a_call_lets_it_run_where_the_agent_would_not_have(
    agent: Agent, workspace: Workspace
) -> None:
    # Where the agent offers its shell headless but refuses a command that writes (it cannot
    # ask), no option lets the shell run: only the hook's allow can. Gemini CLI offers no shell
    # at all without --yolo, so there the allow must simply not get in the way.
    command, output = printing("allowed")
    workspace.add_extension(
        "allower",
        f"""
from sdk_extension import join_session

def allow(input, invocation):
    if input.tool_args.get("command") == {command + " | tee allowed.txt"!r}:
        return {{"permission_decision": "allow", "permission_decision_reason": "the allower knows this one"}}
    return None

join_session(hooks={{"on_pre_tool_use": allow}})
""",
    )
    agent.install_hooks(workspace)
    options = () if agent.offers_unallowed_shell else agent.shell_allowed
    with agent.model([agent.shell(command + " | tee allowed.txt"), Say("done")]) as model:
        run = agent.run(workspace, model, "run the command", *options)
    assert_finished(run, model)
    assert output in model.bodies(), model.log()
    assert (workspace.project / "allowed.txt").read_text() == output


def rewriter(original: str, rewritten: str) -> str:
    """An extension that rewrites the shell command ``original`` into ``rewritten`` (no decision)."""
    return f"""
from sdk_extension import join_session

def rewrite(input, invocation):
    if input.tool_args.get("command") == {original!r}:
        return {{"modified_args": {{**input.tool_args, "command": {rewritten!r}}}}}
    return None

join_session(hooks={{"on_pre_tool_use": rewrite}})
"""


@for_agents()
def test_a_rewritten_call_runs_with_the_new_arguments(agent: Agent, workspace: Workspace) -> None:
    original, _ = printing("original")
    rewritten, output = printing("rewritten")
    workspace.add_extension("rewriter", rewriter(original, rewritten))
    agent.install_hooks(workspace)
    with agent.model([agent.shell(original), Say("done")]) as model:
        run = agent.run(workspace, model, "run the command", *agent.shell_allowed)
    assert_finished(run, model)
    assert output in model.bodies(), model.log()
    assert "ran-original" not in model.bodies(), model.log()


def test_claude_codes_own_permission_rules_judge_a_rewritten_call(claude_code: Agent, workspace: Workspace) -> None:
    # A rewrite without a decision must not skip Claude Code's own check: headless and without
    # --allowedTools, a command that writes is refused, as it would be unrewritten.
    original, _ = printing("original")
    rewritten = "printf ran-rewritten | tee rewritten.txt"
    workspace.add_extension("rewriter", rewriter(original, rewritten))
    claude_code.install_hooks(workspace)
    with claude_code.model([claude_code.shell(original), Say("done")]) as model:
        run = claude_code.run(workspace, model, "run the command")
    assert_finished(run, model)
    (result,) = model.tool_results()
    assert "requires approval: tee rewritten.txt" in result, model.log()
    assert not (workspace.project / "rewritten.txt").exists()
    assert "ran-original" not in model.bodies(), model.log()


@for_agents()
def test_a_hook_that_asks_stops_a_headless_call_and_the_model_learns_why(agent: Agent, workspace: Workspace) -> None:
    command, output = printing("asked")
    workspace.add_extension(
        "asker",
        """
from sdk_extension import join_session

def ask(input, invocation):
    return {"permission_decision": "ask", "permission_decision_reason": "the asker wants a human to look"}

join_session(hooks={"on_pre_tool_use": ask})
""",
    )
    agent.install_hooks(workspace)
    with agent.model([agent.shell(command), Say("done")]) as model:
        run = agent.run(workspace, model, "run the command", *agent.shell_allowed)
    assert_finished(run, model)
    assert output not in model.bodies(), model.log()
    assert any("the asker wants a human to look" in result for result in model.tool_results()), model.log()
    assert not any("cannot ask" in result for result in model.tool_results()), model.log()


@for_agents()
def test_a_guard_that_raises_denies_the_call(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension(
        "crasher",
        """
from sdk_extension import join_session

def guard(input, invocation):
    raise RuntimeError("the crasher broke on purpose")

join_session(hooks={"on_pre_tool_use": guard})
""",
    )
    agent.install_hooks(workspace)
    with agent.model(show_env(agent)) as model:
        run = agent.run(workspace, model, "show me the .env file", *agent.shell_allowed)
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert "the crasher broke on purpose" in model.bodies(), model.log()


@for_agents()
def test_a_hung_background_host_fails_the_guard_closed(agent: Agent, workspace: Workspace) -> None:
    # The background host stops answering (SIGSTOP) once the session's first hooks ran; the
    # guard's call must still be denied, and the model must not see the secret. The hook
    # command's wait is lowered from its 50 s through EXTENSION_HOST_HOOK_TIMEOUT.
    workspace.add_extension("guard", DENY_ENV)
    agent.install_hooks(workspace)
    stopped: list[int] = []

    def hang() -> None:
        stopped.append(workspace.hook_host_pid())
        os.kill(stopped[0], signal.SIGSTOP)

    def resume() -> None:  # the hook command stops (SIGKILL) a background host that hung: it may be gone
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped[0], signal.SIGCONT)

    script: list[Turn] = [agent.shell("cat .env").with_before(hang), Say("done", before=resume)]
    try:
        with agent.model(script) as model:
            run = agent.run(
                workspace,
                model,
                "show me the .env file",
                *agent.shell_allowed,
                env={"EXTENSION_HOST_HOOK_TIMEOUT": "10"},
            )
    finally:
        if stopped:
            resume()  # whatever happened, nothing stays stopped
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any("did not answer host.hook within the 10 s" in result for result in model.tool_results()), model.log()


@for_agents()
def test_a_killed_background_host_is_replaced_and_the_guard_still_denies(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension("guard", DENY_ENV)
    agent.install_hooks(workspace)
    hosts: list[int] = []

    def kill() -> None:  # the session's first hooks ran: the background host is up
        hosts.append(workspace.hook_host_pid())
        os.kill(hosts[0], signal.SIGKILL)
        assert wait_for_exit(hosts[0], timeout=10)

    def note_the_new_host() -> None:
        hosts.append(workspace.hook_host_pid())

    script: list[Turn] = [agent.shell("cat .env").with_before(kill), Say("done", before=note_the_new_host)]
    with agent.model(script) as model:
        run = agent.run(workspace, model, "show me the .env file", *agent.shell_allowed)
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any(DENY_REASON in result for result in model.tool_results()), model.log()
    assert hosts[1] != hosts[0]


@for_agents()
def test_a_guard_extension_with_a_syntax_error_fails_closed(agent: Agent, workspace: Workspace) -> None:
    # The prompt is a guard event too: it is blocked before anything reaches the model.
    workspace.add_extension("guard", DENY_ENV.replace("def guard(input, invocation):", "def guard(input, invocation)"))
    agent.install_hooks(workspace)
    with agent.model(show_env(agent)) as model:
        run = agent.run(workspace, model, "show me the .env file", *agent.shell_allowed)
    assert not run.timed_out and not run.leftovers, run.describe()
    assert not model.requests, model.log()
    said = run.stdout + run.stderr
    assert "blocked by the project's extensions (failing closed): project:guard is failed" in said, run.describe()
    assert "SyntaxError" in said, run.describe()


@for_agents()
def test_context_a_post_tool_hook_adds_reaches_the_model(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension(
        "noter",
        """
from sdk_extension import join_session

def note(input, invocation):
    return {"additional_context": f"noter: {input.tool_name} ran, context-marker-7731"}

join_session(hooks={"on_post_tool_use": note})
""",
    )
    agent.install_hooks(workspace)
    command, output = printing("noted")
    with agent.model([agent.shell(command), Say("done")]) as model:
        run = agent.run(workspace, model, "run the command", *agent.shell_allowed)
    assert_finished(run, model)
    assert output in model.bodies(), model.log()
    assert f"noter: {agent.shell_tool} ran, context-marker-7731" in model.bodies(), model.log()


@for_agents()
def test_a_post_tool_hook_replaces_a_built_in_tools_result_before_the_model_sees_it(
    agent: Agent, workspace: Workspace
) -> None:
    workspace.add_extension("redactor", REDACTOR)
    agent.install_hooks(workspace)
    with agent.model(show_env(agent)) as model:
        run = agent.run(workspace, model, "show me the .env file", *agent.shell_allowed)
    assert_finished(run, model)
    assert any(REDACTED in result for result in model.tool_results()), model.log()
    assert SECRET not in model.bodies(), model.log()


def claude_code_reads_env(
    claude_code: Agent, workspace: Workspace, name: str, code: str, *options: str
) -> tuple[AgentRun, ScriptedModel]:
    """With the post-tool extension ``name`` (``code``) installed, the model reads ``.env`` with
    Claude Code's Read tool, then ends its turn; the run (finished) and the model."""
    workspace.add_extension(name, code)
    claude_code.install_hooks(workspace)
    script: list[Turn] = [Call("Read", {"file_path": str(workspace.project / ".env")}), Say("done")]
    with claude_code.model(script) as model:
        run = claude_code.run(workspace, model, "read the .env file", "--allowedTools", "Read", *options)
    assert_finished(run, model)
    return run, model


def test_claude_code_takes_a_reads_result_edited_within_its_own_fields(
    claude_code: Agent, workspace: Workspace
) -> None:
    # Read's result reaches the hook as JSON ({"type": "text", "file": {...}}); masking inside it
    # keeps its fields, which is the shape Claude Code takes as Read's new output.
    _, model = claude_code_reads_env(claude_code, workspace, "masker", MASKER)
    assert any(MASKED in result for result in model.tool_results()), model.log()
    assert SECRET not in model.bodies(), model.log()


def test_a_new_result_claude_code_cannot_take_is_not_claimed_and_the_hook_call_warns(
    claude_code: Agent, workspace: Workspace
) -> None:
    # Plain text in place of Read's output fits neither a string nor Read's fields: Claude Code
    # would keep the original, so the bridge sends no replacement and says so in one line.
    run, model = claude_code_reads_env(claude_code, workspace, "redactor", REDACTOR, "--include-hook-events")
    assert SECRET in model.bodies(), model.log()  # what the agent did, which the bridge does not hide
    assert REDACTED not in model.bodies(), model.log()
    (response,) = [
        event
        for event in run.json_lines()
        if event.get("subtype") == "hook_response" and event.get("hook_event") == "PostToolUse"
    ]
    warning = "a post-tool hook replaced the result of Read, but Claude Code takes"
    assert warning in json.loads(response["stdout"])["systemMessage"], response
    assert response["stderr"].count(warning) == 1, response


@for_agents()
def test_a_rejected_prompt_never_reaches_the_model(agent: Agent, workspace: Workspace) -> None:
    workspace.add_extension(
        "gatekeeper",
        """
from sdk_extension import join_session

def check(input, invocation):
    if "forbidden-plan" in input.prompt:
        raise ValueError("the gatekeeper refuses forbidden plans")
    return None

join_session(hooks={"on_user_prompt_submitted": check})
""",
    )
    agent.install_hooks(workspace)
    with agent.model([Say("I should never have been asked")]) as model:
        run = agent.run(workspace, model, "carry out the forbidden-plan now")
    assert "forbidden-plan" not in model.bodies(), model.log()
    assert "the gatekeeper refuses forbidden plans" in run.stdout + run.stderr, run.describe()
    assert not run.timed_out and not run.leftovers, run.describe()


@for_agents()
def test_session_start_context_reaches_the_model_and_the_session_end_hook_runs(
    agent: Agent, workspace: Workspace
) -> None:
    ends = workspace.root / "ends.txt"
    workspace.add_extension(
        "sessions",
        record_to(ends)
        + """
from sdk_extension import join_session

def start(input, invocation):
    return {"additional_context": f"session-start-marker ({input.source})"}

def end(input, invocation):
    record(f"end {input.reason}")
    return {"session_summary": "session-summary-marker"}

join_session(hooks={"on_session_start": start, "on_session_end": end})
""",
    )
    agent.install_hooks(workspace)
    with agent.model([Say("hello")]) as model:
        run = agent.run(workspace, model, "say hello")
    assert_finished(run, model)
    assert "session-start-marker (startup)" in model.bodies(), model.log()
    assert ends.read_text() == "end complete\n", run.describe()  # a headless run ends by itself


@for_agents()
def test_the_installed_guard_holds_when_extensions_is_not_on_the_agents_path(
    agent: Agent, workspace: Workspace
) -> None:
    workspace.add_extension("guard", DENY_ENV)
    agent.install_hooks(workspace)
    path = [entry for entry in workspace.env()["PATH"].split(os.pathsep) if entry != str(EXTENSIONS_BIN)]
    with agent.model(show_env(agent)) as model:
        run = agent.run(
            workspace, model, "show me the .env file", *agent.shell_allowed, env={"PATH": os.pathsep.join(path)}
        )
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any(DENY_REASON in result for result in model.tool_results()), model.log()


def test_gemini_cli_runs_no_project_hook_when_started_with_skip_trust(gemini_cli: Agent, workspace: Workspace) -> None:
    # Why hook install must say so: headless Gemini CLI in an untrusted folder stops and suggests
    # --skip-trust, which then runs the prompt without any of the project's hooks.
    calls = workspace.root / "calls.txt"
    workspace.add_extension("counter", counter(calls))
    gemini_cli.install_hooks(workspace)
    command, output = printing("unguarded")
    with gemini_cli.model([gemini_cli.shell(command), Say("done")]) as model:
        run = gemini_cli.run(
            workspace, model, "run the command", "--yolo", "--skip-trust", env={"GEMINI_CLI_TRUST_WORKSPACE": "false"}
        )
    assert_finished(run, model)
    assert output in model.bodies(), model.log()
    assert not calls.exists(), calls.read_text()


def test_user_scope_hooks_guard_gemini_cli_even_when_started_with_skip_trust(
    gemini_cli: Agent, workspace: Workspace
) -> None:
    workspace.add_extension("guard", DENY_ENV)
    gemini_cli.install_hooks(workspace, "--user")
    with gemini_cli.model(show_env(gemini_cli)) as model:
        run = gemini_cli.run(
            workspace,
            model,
            "show me the .env file",
            "--yolo",
            "--skip-trust",
            env={"GEMINI_CLI_TRUST_WORKSPACE": "false"},
        )
    assert_finished(run, model)
    assert SECRET not in model.bodies(), model.log()
    assert any(DENY_REASON in result for result in model.tool_results()), model.log()


def test_hook_check_and_gemini_cli_agree_on_whether_the_project_is_trusted(
    gemini_cli: Agent, workspace: Workspace
) -> None:
    calls = workspace.root / "calls.txt"
    workspace.add_extension("counter", counter(calls))
    said = gemini_cli.install_hooks(workspace)
    assert "runs a project's hooks only in a folder it trusts" in said, said
    assert "set GEMINI_CLI_TRUST_WORKSPACE=true" in said and "--user" in said, said
    untrusted = {"GEMINI_CLI_TRUST_WORKSPACE": ""}  # the folder's own trust decides
    checked = workspace.extensions("hook", "check", "gemini", check=False)
    assert checked.returncode == 1 and f"it does not trust {workspace.project}" in checked.stdout, checked

    command, output = printing("trusted")
    with gemini_cli.model([gemini_cli.shell(command), Say("done")]) as model:
        run = gemini_cli.run(workspace, model, "run the command", "--yolo", env=untrusted)
    assert run.exit_code != 0 and "not running in a trusted directory" in run.stderr, run.describe()
    assert not model.requests and not calls.exists(), model.log()

    # Trusted by Gemini CLI's own file, with a rule for the project's parent folder.
    rules = {str(workspace.project / "any-child"): "TRUST_PARENT"}
    (workspace.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))
    checked = workspace.extensions("hook", "check", "gemini", check=False)
    assert checked.returncode == 0 and "Gemini CLI runs the hooks of" in checked.stdout, checked
    with gemini_cli.model([gemini_cli.shell(command), Say("done")]) as model:
        run = gemini_cli.run(workspace, model, "run the command", "--yolo", env=untrusted)
    assert_finished(run, model)
    assert output in model.bodies(), model.log()
    assert calls.read_text().splitlines() == ["pre run_shell_command", "post run_shell_command"]


STOPPER = """
from sdk_extension import join_session

def stop(input, invocation):
    if input.stop_hook_active:  # it went on once already: let it stop
        return None
    return {"decision": "block", "reason": "stop-marker-5521: check your answer once more"}

join_session(hooks={"on_agent_stop": stop})
"""


@for_agents()
def test_an_agent_stop_hook_that_blocks_makes_the_agent_go_on_once_with_its_reason(
    agent: Agent, workspace: Workspace
) -> None:
    workspace.add_extension("stopper", STOPPER)
    agent.install_hooks(workspace)
    with agent.model([Say("first answer"), Say("checked")]) as model:
        run = agent.run(workspace, model, "say something")
    assert_finished(run, model)
    requests = [json.dumps(body) for body in model.conversation_requests()]
    assert "stop-marker-5521" not in requests[0], model.log()
    assert requests[-1].count("stop-marker-5521") == 1, model.log()
    assert "first answer" in requests[-1], model.log()


@for_agents("claude")
def test_guidance_a_failed_tool_hook_adds_reaches_the_model_and_no_post_tool_hook_runs(
    agent: Agent, workspace: Workspace
) -> None:
    workspace.add_extension(
        "failures",
        """
from sdk_extension import join_session

def failed(input, invocation):
    return {"additional_context": f"failure-marker-6613: {input.tool_name} failed with {input.error!r}"}

def ran(input, invocation):
    return {"additional_context": "post-marker-6614"}

join_session(hooks={"on_post_tool_use_failure": failed, "on_post_tool_use": ran})
""",
    )
    agent.install_hooks(workspace)
    with agent.model([agent.shell("echo broken-7 >&2; exit 3"), Say("done")]) as model:
        run = agent.run(workspace, model, "run the command", *agent.shell_allowed)
    assert_finished(run, model)
    bodies = model.bodies()
    assert f"failure-marker-6613: {agent.shell_tool} failed with " in bodies, model.log()
    assert "broken-7" in bodies.split("failure-marker-6613", 1)[1], model.log()
    assert "post-marker-6614" not in bodies, model.log()
