"""__EXTENSION_NAME__: an extension that offers one tool to the agent."""

from __future__ import annotations

from typing import Annotated

from sdk_extension import join_session, tool


@tool(description="Say hello to someone.")
def __TOOL_PREFIX___hello(name: Annotated[str, "who to greet"] = "world") -> str:
    return f"Hello, {name}!"


join_session(tools=[__TOOL_PREFIX___hello])
