"""The six hook points as pluggy hook specifications.

One function per hook point, body-less, documented. Every implementation (an extension's
hooks, forwarded over the wire, or an in-process plugin of the embedding application) takes
``input`` (the hook's input object from :mod:`sdk_extension.hooks`) and optionally
``invocation`` (with ``session_id``), and returns ``None`` (no opinion), the hook's output
object, or a dict of its output keys; it may be ``async``. Anything else is malformed: a
guard hook denies, another hook's answer is ignored with a warning. How outputs of several
implementations compose is :mod:`extension_host.hooks`' business, not pluggy's.

In-process plugins use :data:`hookimpl`::

    from extension_host import hookimpl

    class AuditLog:
        @hookimpl(tryfirst=True)
        def on_pre_tool_use(self, input):
            print("about to run", input.tool_name)
"""

from __future__ import annotations

from typing import Any, Final

import pluggy

from sdk_extension.hooks import (
    ErrorOccurredInput,
    HookInvocation,
    PostToolUseInput,
    PreToolUseInput,
    SessionEndInput,
    SessionStartInput,
    UserPromptSubmittedInput,
)

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME: Final = "extension_host"
hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a method of an in-process plugin as the implementation of a hook point."""


@hookspec
def on_user_prompt_submitted(input: UserPromptSubmittedInput, invocation: HookInvocation) -> Any:
    """The user submitted a prompt; may rewrite it (``modified_prompt``) or add hidden context.

    A guard: if an implementation fails, the prompt is rejected.
    """


@hookspec
def on_pre_tool_use(input: PreToolUseInput, invocation: HookInvocation) -> Any:
    """A tool is about to run; may decide ``allow``/``ask``/``deny``, rewrite its arguments
    (``modified_args``) or add context. A guard: if an implementation fails, the call is denied."""


@hookspec
def on_post_tool_use(input: PostToolUseInput, invocation: HookInvocation) -> Any:
    """A tool ran; may replace its result (``modified_result``) or add context."""


@hookspec
def on_session_start(input: SessionStartInput, invocation: HookInvocation) -> Any:
    """A session starts (``startup``, ``resume`` or ``new``); may add initial context."""


@hookspec
def on_session_end(input: SessionEndInput, invocation: HookInvocation) -> Any:
    """A session ends; may give a summary and describe cleanup actions."""


@hookspec
def on_error_occurred(input: ErrorOccurredInput, invocation: HookInvocation) -> Any:
    """An error occurred; may say how to handle it (``retry``/``skip``/``abort``)."""
