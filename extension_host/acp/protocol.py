"""What ``extensions acp`` answers and sends: the ACP methods, the shapes of their params, the limits.

:data:`AGENT_METHODS` is the one table of the methods a client may call (a request, or the
``session/cancel`` notification); :data:`CLIENT_METHODS` the methods this agent calls on the
client. The params of each are checked here, with pydantic, before anything acts on them:
unknown members are ignored (the protocol adds optional ones, and ``_meta`` anywhere), a
missing or mistyped member is one ``INVALID_PARAMS`` error naming it, and every string and list
a client may send is bounded. What the answers hold is built by the server; the JSON Schema of
the protocol (``agentclientprotocol/agent-client-protocol``) is the oracle the tests check
every message against.

This module knows ACP's shapes; not hosts, sessions or streams.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Annotated, Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS

__all__ = [
    "AGENT_METHODS",
    "CLIENT_METHODS",
    "MAX_PROMPT_BLOCKS",
    "MAX_SESSIONS",
    "PROTOCOL_VERSION",
    "CancelParams",
    "InitializeParams",
    "LoadSessionParams",
    "NewSessionParams",
    "PermissionAnswer",
    "PromptParams",
    "parse",
]

M = TypeVar("M", bound=BaseModel)

PROTOCOL_VERSION: Final = 1
"""The ACP version spoken (the protocol's ``protocolVersion``, a major version)."""
MAX_SESSIONS: Final = 32
"""Sessions one connection may hold open; each runs its own extensions."""
MAX_PROMPT_BLOCKS: Final = 256
"""Content blocks one prompt may carry."""
_MAX_PATH: Final = 4096
_MAX_ID: Final = 128
_MAX_TEXT: Final = 8 * 1024 * 1024
_MAX_MCP_SERVERS: Final = 64


@dataclass(frozen=True)
class Method:
    """One method of the table: whether it is a notification, and what it does here."""

    notification: bool
    does: str


AGENT_METHODS: Final[dict[str, Method]] = {
    "initialize": Method(False, "agrees on the protocol version; says what this agent can do (no authentication)"),
    "session/new": Method(False, "starts a host in the folder `cwd` with its extensions, a new persisted session"),
    "session/load": Method(False, "resumes a persisted session (`extensions sessions list`) and replays its history"),
    "session/prompt": Method(False, "runs one prompt, or an extension's slash command, to the end of its turn"),
    "session/cancel": Method(True, "cancels the running turn: its tool calls are withdrawn"),
}
"""The methods a client may call: the one place a method is added (the server binds each)."""

CLIENT_METHODS: Final[dict[str, str]] = {
    "session/update": "the turn as it happens, history on load, the slash commands on offer",
    "session/request_permission": "a hook's `ask`: allow once, or deny",
}
"""The methods this agent calls on the client."""


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class FileSystemCapabilities(_Params):
    readTextFile: bool = False
    writeTextFile: bool = False


class ClientCapabilities(_Params):
    fs: FileSystemCapabilities = Field(default_factory=FileSystemCapabilities)
    terminal: bool = False


class InitializeParams(_Params):
    protocol_version: Annotated[int, Field(ge=0, le=65535, alias="protocolVersion", strict=True)]
    client_capabilities: ClientCapabilities = Field(ClientCapabilities(), alias="clientCapabilities")


def _absolute(path: str) -> str:
    if "\0" in path or not PurePath(path).is_absolute():
        raise ValueError("must be an absolute path")
    return path


SessionId = Annotated[str, Field(min_length=1, max_length=_MAX_ID, pattern=r"^[A-Za-z0-9._-]+$")]
Cwd = Annotated[str, Field(min_length=1, max_length=_MAX_PATH)]


class NewSessionParams(_Params):
    cwd: Cwd
    mcp_servers: Annotated[list[Any], Field(max_length=_MAX_MCP_SERVERS, alias="mcpServers")] = []

    _cwd = field_validator("cwd")(_absolute)


class LoadSessionParams(NewSessionParams):
    session_id: SessionId = Field(alias="sessionId")


class CancelParams(_Params):
    session_id: SessionId = Field(alias="sessionId")


class TextBlock(_Params):
    type: Literal["text"]
    text: Annotated[str, Field(max_length=_MAX_TEXT)]


class ResourceLinkBlock(_Params):
    type: Literal["resource_link"]
    uri: Annotated[str, Field(max_length=_MAX_PATH * 2)]
    name: Annotated[str, Field(max_length=_MAX_PATH)] = ""


class EmbeddedText(_Params):
    uri: Annotated[str, Field(max_length=_MAX_PATH * 2)]
    text: Annotated[str | None, Field(max_length=_MAX_TEXT)] = None
    blob: Annotated[str | None, Field(max_length=_MAX_TEXT)] = None


class ResourceBlock(_Params):
    type: Literal["resource"]
    resource: EmbeddedText


class MediaBlock(_Params):
    type: Literal["image", "audio"]


ContentBlock = Annotated[TextBlock | ResourceLinkBlock | ResourceBlock | MediaBlock, Field(discriminator="type")]


class PromptParams(_Params):
    session_id: SessionId = Field(alias="sessionId")
    prompt: Annotated[list[ContentBlock], Field(min_length=1, max_length=MAX_PROMPT_BLOCKS)]


class _Selected(_Params):
    outcome: Literal["selected"]
    option_id: Annotated[str, Field(max_length=_MAX_ID, alias="optionId")]


class _Cancelled(_Params):
    outcome: Literal["cancelled"]


class PermissionAnswer(_Params):
    """The client's answer to ``session/request_permission``."""

    outcome: Annotated[_Selected | _Cancelled, Field(discriminator="outcome")]


def parse(model: type[M], params: Any, method: str) -> M:
    """``params`` as ``model``.

    Raises:
        RpcError: ``INVALID_PARAMS``, naming the first member at fault and what is wrong with it.
    """
    try:
        return model.model_validate(params if params is not None else {})
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "params"
        raise RpcError(INVALID_PARAMS, f"{method}: {where}: {first['msg']}") from None
