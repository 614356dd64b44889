"""__EXTENSION_NAME__: __EXTENSION_DESCRIPTION__ It offers one tool."""

from __future__ import annotations

from typing import Annotated

from sdk_extension import join_session, tool


# The tool's name is what the agent calls; it starts with this extension's own prefix so that
# no two scaffolded extensions offer the same name. It need not match the function's name.
@tool(name="__TOOL_PREFIX___hello", description="Say hello to someone.")
def hello(name: Annotated[str, "who to greet"] = "world") -> str:
    return f"Hello, {name}!"


join_session(tools=[hello])
