"""shell_guard: refuse catastrophic shell commands before the agent runs them.

Registers one ``on_pre_tool_use`` hook and no tools. The rules and the parsing live in
``guard.py`` next to this file; the project may add rules in ``shell_guard.json`` at its root.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sdk_extension import join_session

if TYPE_CHECKING:  # the hook types load on the first hook call, not at start-up
    from sdk_extension import HookInvocation, PreToolUseInput

# This folder is sys.path[0] when the host runs the extension, so the sibling module imports.
from guard import CONFIG_FILE_NAME, ConfigFile, check_tool_call, current_git_branch

# The host starts extensions in the project root, which is where the config file lives.
config_file = ConfigFile(Path.cwd() / CONFIG_FILE_NAME)


def on_pre_tool_use(input: PreToolUseInput, invocation: HookInvocation) -> dict[str, str] | None:
    """Deny the tool call when a command in it breaks a rule; otherwise have no opinion."""
    config, warning = config_file.get()
    if warning is not None:
        # Hooks run only once join_session has returned, so `session` exists here.
        session.log(warning, level="warning")
    cwd = input.cwd or os.getcwd()
    return check_tool_call(input.tool_name, input.tool_args, config, current_branch=lambda: current_git_branch(cwd))


if __name__ == "__main__":
    session = join_session(hooks={"on_pre_tool_use": on_pre_tool_use})
    _, startup_warning = config_file.get()
    if startup_warning is not None:
        session.log(startup_warning, level="warning")
    session.log("shell_guard is watching shell commands", ephemeral=True)
