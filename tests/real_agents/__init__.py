"""The real agents: the bridges under Claude Code, Gemini CLI, GitHub Copilot CLI and the MCP Inspector.

Every test marked ``real_agent`` installs (once, pinned) the real program from npm and runs it
headless against a scripted stand-in of its model API on 127.0.0.1; what reached the model
(every request body) and the agent's own output are the evidence. Where an agent cannot do what
a hook asks, a test shows what it does instead and that the bridge says so (and does not claim
otherwise). ``pytest -m "not real_agent"`` leaves the tier out.

- ``programs``: the pinned packages and their install into ``$EXTENSION_HOST_TESTS_CACHE`` (else
  the user cache folder's ``extension-host-tests``), once, under a lock.
- ``models``: the scripted model servers (Anthropic Messages, Gemini ``streamGenerateContent``,
  Chat Completions) and their request logs; a subagent's conversation, told by a marker in its
  system prompt, answered from its own script.
- ``runner``: a test's workspace (project with a ``.env`` secret, home, runtime folder) and one
  run of an agent under ``reaper``, a child subreaper that reports and kills every process the
  run left, whatever group or session it moved to.
- ``agents``: what differs per agent (settings, environment, command line, tool names, its
  custom agent files and subagent tool), and
  ``for_agents``, which runs a test once per agent with the divergences expected of each.
- ``extensions``: extension code several scenarios install.
- ``test_hooks``: ``extensions hook install`` in Claude Code and Gemini CLI (install, deny,
  allow, rewrite, and Claude Code's own rules judging a rewrite, ask, a guard that raises, a hung
  and a killed background host, a guard that does not compile, post-tool context, result
  replacement, and the warning where Claude Code would not take one, prompt rejection, session
  start and end, ``extensions`` missing from the agent's PATH, Gemini CLI's trusted folders and
  ``extensions hook check``).
- ``test_subagent_hooks``: the project's guard inside Claude Code's and Gemini CLI's subagents,
  and what the hooks learn of whose call it is.
- ``test_copilot_agent_files``: the same custom agent files read by Copilot CLI and the host.
- ``test_mcp``: ``extensions mcp`` in each agent (Copilot CLI over HTTP too) and in the MCP
  Inspector's ``--cli`` mode; the agents' hooks on MCP tools.
- ``test_copilot``: an extension exported with ``extensions export copilot`` in Copilot CLI and
  in a Copilot SDK session; no process left when the CLI exits or is killed; the switches
  Copilot CLI needs, said by the export and the documentation.
- ``test_copilot_hooks``: the hook points as Copilot CLI calls them (a failed tool's failure
  hooks, agent stop and its follow-up, the prompt-transformed hooks, the words of a denial): the
  behaviour the host copies.
- ``test_programs``, ``test_runner`` and ``test_models``: the installer, the runner and the model
  servers themselves, with stand-ins (not marked: they need neither node nor the network).
"""
