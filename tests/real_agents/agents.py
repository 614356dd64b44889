"""Each real agent as the tests drive it: its program, its model API, its settings, its command line.

An :class:`Agent` knows what differs between the agents and nothing of a scenario: the fake
model it talks to, the environment and settings that point it there (offline, no telemetry, no
update check), the headless command line, the name and arguments of its shell tool, the name it
gives an MCP server's tool, and the file ``extensions mcp --print-config`` registers a server in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from real_agents.models import AnthropicModel, Call, ChatCompletionsModel, GeminiModel, Say, ScriptedModel, Turn
from real_agents.programs import CLAUDE_CODE, COPILOT_CLI, GEMINI_CLI, Program
from real_agents.runner import EXTENSIONS_BIN, AgentRun, Workspace

__all__ = [
    "AGENTS",
    "HOOK_AGENTS",
    "Agent",
    "ClaudeCode",
    "CopilotCli",
    "GeminiCli",
    "assert_finished",
    "for_agents",
    "mcp_server_entry",
    "printing",
]

FAKE_KEY = "fake-key-0123456789abcdef0123456789abcdef"
"""An API key in the shape the agents accept; only the loopback fake ever sees it."""


def write_file(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, making its folder; the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def merge_json(path: Path, update: Mapping[str, Any]) -> None:
    """Merge ``update`` into the JSON object in ``path`` (top-level keys, objects one level deep)."""
    current: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(current.get(key), dict):
            current[key] = {**current[key], **value}
        else:
            current[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2))


@dataclass(frozen=True)
class Agent:
    """What the tests need to know about one agent (see the module's doc)."""

    name: ClassVar[str]
    program: ClassVar[Program]
    model_api: ClassVar[type[ScriptedModel]]
    """The stand-in of the model API it calls."""
    mcp_name: ClassVar[str]
    """The name it gives an MCP server's tool, with ``{server}`` and ``{tool}``."""
    shell_tool: ClassVar[str]
    shell_allowed: ClassVar[tuple[str, ...]] = ()
    """Options that let the shell tool run without asking (headless runs cannot ask)."""
    offers_unallowed_shell: ClassVar[bool] = False
    """Whether a headless run without :attr:`shell_allowed` still offers the shell tool (and
    refuses the calls it would ask about), so that a hook's ``allow`` decides."""

    prefix: Path
    """Where its npm package is installed."""

    def model(self, script: Sequence[Turn], agents: Mapping[str, Sequence[Turn]] | None = None) -> ScriptedModel:
        """A model server for this agent answering from ``script`` (not started), and a
        subagent's conversation whose system prompt holds a marker of ``agents`` from its script."""
        return self.model_api(script, agents)

    subagent_marks_calls: ClassVar[bool] = False
    """Whether its hook payloads say that a tool call was made inside a subagent."""

    def shell(self, command: str) -> Call:
        """The model's call of the agent's shell tool."""
        return Call(self.shell_tool, {"command": command})

    def add_subagent(self, workspace: Workspace, name: str, description: str, prompt: str) -> Path:
        """Write a custom agent ``name`` allowed only the shell tool, in the file the agent
        reads without asking; the file."""
        raise NotImplementedError

    def delegate(self, name: str, prompt: str) -> Call:
        """The model's call of the agent's subagent tool, handing ``prompt`` to agent ``name``."""
        raise NotImplementedError

    def finish_subagent(self, answer: str) -> Turn:
        """A subagent's last turn, answering ``answer`` to its parent."""
        return Say(answer)

    def mcp_tool(self, server: str, tool: str) -> str:
        """The name the model sees for MCP server ``server``'s tool ``tool``."""
        return self.mcp_name.format(server=server, tool=tool)

    def env(self, workspace: Workspace, model: ScriptedModel) -> dict[str, str]:
        raise NotImplementedError

    def configure(self, workspace: Workspace) -> None:
        """Write the agent's own user settings into the workspace's home."""

    def argv(self, prompt: str, options: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def register_mcp_server(self, workspace: Workspace, name: str = "extensions", root: Path | None = None) -> None:
        """Register ``extensions mcp`` of ``root`` (default: the project) as MCP server ``name``,
        with the entry ``--print-config`` gives, in the file the agent reads."""
        raise NotImplementedError

    def mcp_options(self, *servers: str) -> tuple[str, ...]:
        """Options a headless run needs to call the tools of MCP servers ``servers``."""
        return ()

    def install_hooks(self, workspace: Workspace, *options: str) -> str:
        """Trust the project and run ``extensions hook install AGENT`` there; what it printed."""
        workspace.extensions("trust")
        return workspace.extensions("hook", "install", self.name, *options).stdout

    def run(
        self,
        workspace: Workspace,
        model: ScriptedModel,
        prompt: str,
        *options: str,
        stop_hook_host: bool = True,
        timeout: float = 90,
        env: Mapping[str, str] | None = None,
    ) -> AgentRun:
        """Run the agent headless on ``prompt`` against ``model``; stop the project's background
        hook host afterwards (unless ``stop_hook_host`` is false)."""
        self.configure(workspace)
        after = [[str(EXTENSIONS_BIN / "extensions"), "hook", "stop"]] if stop_hook_host else []
        return workspace.run(
            self.argv(prompt, options),
            env={**self.env(workspace, model), **(env or {})},
            timeout=timeout,
            after=after,
        )


def mcp_server_entry(workspace: Workspace, client: str, root: Path | None = None) -> dict[str, Any]:
    """The server entry ``extensions mcp --print-config CLIENT`` prints for ``root`` (default: the project)."""
    where = ("--root", str(root)) if root is not None else ()
    snippet: dict[str, Any] = json.loads(workspace.extensions(*where, "mcp", "--print-config", client).stdout)
    (servers,) = snippet.values()
    (entry,) = servers.values()
    assert isinstance(entry, dict)
    return entry


class ClaudeCode(Agent):
    """Claude Code: ``claude -p PROMPT --output-format stream-json --verbose`` against the Messages API."""

    name = "claude"
    program = CLAUDE_CODE
    model_api = AnthropicModel
    mcp_name = "mcp__{server}__{tool}"
    shell_tool = "Bash"
    shell_allowed = ("--allowedTools", "Bash")
    offers_unallowed_shell = True

    def env(self, workspace: Workspace, model: ScriptedModel) -> dict[str, str]:
        return workspace.env(
            ANTHROPIC_BASE_URL=model.origin,
            ANTHROPIC_API_KEY=FAKE_KEY,
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            # -p connects MCP servers in the background unless told to wait: the first request
            # would otherwise offer the model no MCP tool.
            MCP_CONNECTION_NONBLOCKING="false",
        )

    subagent_marks_calls = True

    def mcp_options(self, *servers: str) -> tuple[str, ...]:
        return ("--allowedTools", ",".join(f"mcp__{server}" for server in servers))

    def add_subagent(self, workspace: Workspace, name: str, description: str, prompt: str) -> Path:
        text = f"---\nname: {name}\ndescription: {description}\ntools: {self.shell_tool}\n---\n{prompt}\n"
        return write_file(workspace.project / ".claude" / "agents" / f"{name}.md", text)

    def delegate(self, name: str, prompt: str) -> Call:
        return Call("Agent", {"description": f"delegate to {name}", "prompt": prompt, "subagent_type": name})

    def argv(self, prompt: str, options: Sequence[str]) -> list[str]:
        command = self.program.command(self.prefix)
        return [*command, "-p", prompt, "--output-format", "stream-json", "--verbose", *options]

    def register_mcp_server(self, workspace: Workspace, name: str = "extensions", root: Path | None = None) -> None:
        entry = mcp_server_entry(workspace, "claude", root)
        merge_json(workspace.project / ".mcp.json", {"mcpServers": {name: entry}})


class GeminiCli(Agent):
    """Gemini CLI: ``gemini -p PROMPT --output-format stream-json -m MODEL`` against ``streamGenerateContent``.

    The model is named (no automatic routing, whose classifier would ask the fake for JSON), and
    the project is trusted through ``GEMINI_CLI_TRUST_WORKSPACE`` (project hooks load only in a
    trusted folder).
    """

    name = "gemini"
    program = GEMINI_CLI
    model_api = GeminiModel
    mcp_name = "mcp_{server}_{tool}"
    shell_tool = "run_shell_command"
    shell_allowed = ("--yolo",)

    def env(self, workspace: Workspace, model: ScriptedModel) -> dict[str, str]:
        return workspace.env(
            GOOGLE_GEMINI_BASE_URL=model.origin,
            GEMINI_API_KEY=FAKE_KEY,
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )

    def configure(self, workspace: Workspace) -> None:
        merge_json(
            workspace.home / ".gemini" / "settings.json",
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            },
        )

    def mcp_options(self, *servers: str) -> tuple[str, ...]:
        return self.shell_allowed  # headless, Gemini CLI offers no tool it would ask about

    def add_subagent(self, workspace: Workspace, name: str, description: str, prompt: str) -> Path:
        # The user's folder: a project's agents wait until the user acknowledges them.
        text = f"---\nname: {name}\ndescription: {description}\ntools:\n  - {self.shell_tool}\n---\n{prompt}\n"
        return write_file(workspace.home / ".gemini" / "agents" / f"{name}.md", text)

    def delegate(self, name: str, prompt: str) -> Call:
        return Call("invoke_agent", {"agent_name": name, "prompt": prompt})

    def finish_subagent(self, answer: str) -> Turn:
        return Call("complete_task", {"result": answer})

    def argv(self, prompt: str, options: Sequence[str]) -> list[str]:
        command = self.program.command(self.prefix)
        return [*command, "-p", prompt, "--output-format", "stream-json", "-m", "gemini-2.5-flash", *options]

    def register_mcp_server(self, workspace: Workspace, name: str = "extensions", root: Path | None = None) -> None:
        entry = mcp_server_entry(workspace, "gemini", root)
        merge_json(workspace.project / ".gemini" / "settings.json", {"mcpServers": {name: entry}})


class CopilotCli(Agent):
    """GitHub Copilot CLI in offline mode (``COPILOT_OFFLINE``) against Chat Completions, with
    extensions turned on (the ``EXTENSIONS`` feature flag; in ``-p`` mode also
    ``GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS``)."""

    name = "copilot"
    program = COPILOT_CLI
    model_api = ChatCompletionsModel
    mcp_name = "{server}-{tool}"
    shell_tool = "bash"

    subagent_marks_calls = True

    def shell(self, command: str) -> Call:
        return Call(self.shell_tool, {"command": command, "description": "run a command"})

    def add_subagent(self, workspace: Workspace, name: str, description: str, prompt: str) -> Path:
        text = f"---\nname: {name}\ndescription: {description}\ntools: [{self.shell_tool}]\n---\n{prompt}\n"
        return write_file(workspace.project / ".github" / "agents" / f"{name}.agent.md", text)

    def delegate(self, name: str, prompt: str) -> Call:
        return Call("task", {"description": f"delegate to {name}", "prompt": prompt, "agent_type": name, "name": name})

    def env(self, workspace: Workspace, model: ScriptedModel) -> dict[str, str]:
        self.share_unpacked_files(workspace)
        return workspace.env(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"{model.origin}/v1",
            COPILOT_PROVIDER_API_KEY=FAKE_KEY,
            COPILOT_MODEL="test-model",
            COPILOT_CLI_ENABLED_FEATURE_FLAGS="EXTENSIONS",
            GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS="true",
        )

    def share_unpacked_files(self, workspace: Workspace) -> None:
        """Link the workspace's ``~/.cache/copilot/pkg`` to the files this install unpacked once.

        On its first run in a home, Copilot CLI unpacks its bundled files there: 235 MB and about
        a second per test otherwise. It uses a complete unpacked copy it finds as it is."""
        link = workspace.home / ".cache" / "copilot" / "pkg"
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(self.unpacked_files())

    def unpacked_files(self) -> Path:
        """The folder of files this install's Copilot CLI unpacks, unpacked on the first call
        (into a folder of its own, renamed into place, so a concurrent caller never sees half)."""
        unpacked = self.prefix / "unpacked"
        if not unpacked.exists():
            staging = self.prefix / f".unpacking-{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            argv = [*self.program.command(self.prefix), "--version"]
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(staging), "XDG_CACHE_HOME": str(staging)}
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            if done.returncode != 0 or not any((staging / "copilot" / "pkg").glob("*/*/.extraction-complete")):
                shutil.rmtree(staging, ignore_errors=True)
                raise AssertionError(f"Copilot CLI did not unpack its files (exit {done.returncode}):\n{done.stderr}")
            try:
                os.replace(staging / "copilot" / "pkg", unpacked)
            except OSError:  # another process put its copy in place first
                pass
            shutil.rmtree(staging, ignore_errors=True)
        return unpacked

    def argv(self, prompt: str, options: Sequence[str]) -> list[str]:
        command = self.program.command(self.prefix)
        return [*command, "-p", prompt, "--allow-all-tools", "--output-format", "json", *options]

    def register_mcp_server(self, workspace: Workspace, name: str = "extensions", root: Path | None = None) -> None:
        entry = mcp_server_entry(workspace, "copilot", root)
        merge_json(workspace.home / ".copilot" / "mcp-config.json", {"mcpServers": {name: entry}})


AGENTS: dict[str, type[Agent]] = {agent.name: agent for agent in (ClaudeCode, GeminiCli, CopilotCli)}
HOOK_AGENTS = ("claude", "gemini")
"""The agents whose command hooks ``extensions hook install`` writes."""


def for_agents(*names: str, **divergences: str) -> pytest.MarkDecorator:
    """Run the test once per agent in ``names`` (default: both hook agents), through the
    ``agent`` fixture; an agent given a reason in ``divergences`` is expected to fail, strictly,
    for that reason (the behaviour it shows today)."""
    chosen = names or HOOK_AGENTS
    unknown = set(divergences) - set(chosen)
    assert not unknown, f"divergences for agents the test does not run: {unknown}"
    params = [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=divergences[name]))
        if name in divergences
        else name
        for name in chosen
    ]
    return pytest.mark.parametrize("agent", params, indirect=True)


def printing(word: str) -> tuple[str, str]:
    """A shell command that prints ``ran-WORD``, and that output: the command's text does not
    hold its output, so finding the output in a request means the command ran."""
    return f"printf 'ran-%s' {word}", f"ran-{word}"


def assert_finished(run: AgentRun, model: ScriptedModel) -> None:
    """The agent ended by itself, successfully, and left no process behind."""
    assert run.exit_code == 0 and not run.timed_out, f"{run.describe()}\n--- model requests\n{model.log()}"
    assert not run.leftovers, f"processes left after the agent exited: {run.leftovers}"
