"""The ``data`` of the events that ask the user for input and say it was given: a question
(``user_input.*``) and a form or a page to open (``elicitation.*``).

Same rules as :mod:`extension_host.schemas.session_data`: the published Copilot SDK's generated
session-event types, key for key. These requests are answered live, so their events are always
ephemeral; the form an elicitation asks for is checked by its keys and left open below them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import with_config
from typing_extensions import TypedDict

from extension_host.schemas.session_data import CLOSED

__all__ = [
    "ElicitationCompletedData",
    "ElicitationRequestedData",
    "ElicitationSchema",
    "UserInputCompletedData",
    "UserInputRequestedData",
]


@with_config(CLOSED)
class UserInputRequestedData(TypedDict):
    """A question for the user, maybe with choices to pick from (``user_input.requested``)."""

    requestId: str
    question: str
    choices: NotRequired[list[str]]
    allowFreeform: NotRequired[bool]
    """Whether the user may type an answer besides the choices."""
    toolCallId: NotRequired[str]
    """The tool call that asked."""


@with_config(CLOSED)
class UserInputCompletedData(TypedDict):
    """The user answered a question, or it was dismissed (``user_input.completed``)."""

    requestId: str
    answer: NotRequired[str]
    wasFreeform: NotRequired[bool]
    """Whether the answer was typed rather than picked from the choices."""


@with_config(CLOSED)
class ElicitationSchema(TypedDict):
    """The form an elicitation asks the user to fill in: its fields, as JSON Schema."""

    type: Literal["object"]
    properties: dict[str, Any]
    required: NotRequired[list[str]]


@with_config(CLOSED)
class ElicitationRequestedData(TypedDict):
    """A form for the user to fill in, or a page to open (``elicitation.requested``)."""

    requestId: str
    message: str
    mode: NotRequired[Literal["form", "url"]]
    requestedSchema: NotRequired[ElicitationSchema]
    url: NotRequired[str]
    """The page to open (``url`` mode)."""
    elicitationSource: NotRequired[str]
    """The MCP server that asked; absent when the agent did."""
    toolCallId: NotRequired[str]


@with_config(CLOSED)
class ElicitationCompletedData(TypedDict):
    """The user answered an elicitation, or it was dismissed (``elicitation.completed``)."""

    requestId: str
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]
    """The form's values when the user accepted it, by field name."""
