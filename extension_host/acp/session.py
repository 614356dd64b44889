"""One ACP session: an :class:`~extension_host.host.ExtensionHost` in the client's folder, with its agent.

An :class:`AcpSession` is a host for the project of the session's ``cwd`` (its extensions, its
persisted session, whose id is the ACP ``sessionId``) and the agent it was given. Its host's
events go through an :class:`~extension_host.acp.updates.UpdateMapper` to the client as
``session/update``; a hook's ``ask`` (a ``permission.requested`` no hook decided) becomes a
``session/request_permission`` to the client, whose answer resolves it. :meth:`AcpSession.prompt`
runs one prompt (or an extension's slash command) to the end of its turn and says how it
stopped; prompts of one session run one after another.

A prompt's content blocks become the host's prompt (:func:`prompt_input`): text as it is, a
``file:`` resource link as an attachment (checked to lie in the project, as any attachment),
another link as its URI in the text, an embedded text resource appended to the text under its
URI. This module knows hosts and ACP's session methods; not streams or the other sessions.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from extension_protocol.connection import ConnectionClosed, RpcError
from extension_protocol.protocol import INTERNAL_ERROR, INVALID_PARAMS, Event

from ..host import ExtensionHost
from ..launch.forkserver import ForkServer
from ..runtime.options import Timeouts
from ..session.agents import Agent
from ..session.errors import PromptRejectedError, TurnAbortedError, TurnCancelledError, TurnError
from .protocol import ContentBlock, PermissionAnswer, ResourceBlock, ResourceLinkBlock, TextBlock
from .updates import MAPPED_EVENTS, UpdateMapper, available_commands

__all__ = ["PERMISSION_OPTIONS", "TURN_TIMEOUT", "AcpSession", "Notify", "Request", "prompt_input"]

TURN_TIMEOUT: Final = 24 * 3600.0
"""Seconds one prompt's turn may take (a local model on a CPU can be slow; cancel ends it sooner)."""
PERMISSION_OPTIONS: Final = (
    {"optionId": "allow_once", "kind": "allow_once", "name": "Allow once"},
    {"optionId": "reject_once", "kind": "reject_once", "name": "Deny"},
)
"""What a client is offered for a hook's ``ask``: the host decides each call on its own."""
_REPLAY_PAUSE: Final = 256
"""Updates of a replayed history sent between two turns of the event loop."""

Notify = Callable[[str, Any], None]
"""Sends a notification to the client."""
Request = Callable[[str, Any], "asyncio.Future[Any]"]
"""Sends a request to the client; the future of its answer."""


class AcpSession:
    """One session of the connection (see the module)."""

    def __init__(
        self,
        cwd: Path,
        agent: Agent,
        notify: Notify,
        request: Request,
        *,
        user_home: Path | None,
        readiness_timeout: float,
        watch: bool,
        fork_server: ForkServer | bool,
        resume: str | None = None,
    ) -> None:
        """Raises: the host's errors (a folder that is not one, an unknown session)."""
        self.agent: Final = agent
        self.host: Final = ExtensionHost(
            cwd,
            user_home,
            agent=agent,
            timeouts=Timeouts(readiness=readiness_timeout),
            watch=watch,
            fork_server=fork_server,
            permission_clients=True,
            session=resume,
        )
        self.session_id: Final = self.host.session_id
        self._notify = notify
        self._request = request
        self._mapper = UpdateMapper()
        self._unsubscribe: Callable[[], Any] | None = None
        self._lock = asyncio.Lock()
        self._cancels = 0
        self._asking: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Start the host and begin sending its events as updates."""
        await self.host.start()
        self._unsubscribe = self.host.on_event(self._on_event)

    async def replay(self) -> None:
        """Send the session's history so far as updates (``session/load``)."""
        mapper = UpdateMapper(replaying=True)
        sent = 0
        for event in self.host.replay():
            for update in mapper.map(event):
                self._send(update)
                sent += 1
                if sent % _REPLAY_PAUSE == 0:
                    await asyncio.sleep(0)  # the client's answers are read meanwhile

    def announce_commands(self) -> None:
        """Send the extensions' slash commands on offer now."""
        commands = {name: info.description for name, info in self.host.commands.items()}
        self._send(available_commands(commands))

    async def stop(self) -> None:
        """Stop the host (its extensions, its session's log) and the agent's connections."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in self._asking:
            task.cancel()
        await self.host.stop()
        close = getattr(self.agent, "close", None)
        if callable(close):
            await close()

    # -- prompts ----------------------------------------------------------------------

    async def prompt(self, blocks: Sequence[ContentBlock]) -> dict[str, Any]:
        """Run one prompt to the end of its turn; its ``PromptResponse``.

        Raises:
            RpcError: the prompt cannot be sent (``INVALID_PARAMS``: an attachment outside the
                project, an image), or its turn failed (``INTERNAL_ERROR``, the reason).
        """
        text, attachments = prompt_input(blocks)
        cancels = self._cancels
        async with self._lock:
            if self._cancels != cancels:
                return {"stopReason": "cancelled"}  # cancelled while it waited for the one before
            name, _, rest = text[1:].partition(" ")
            if text.startswith("/") and not attachments and name in self.host.commands:
                return await self._command(name, rest.strip())
            try:
                await self.host.send_and_wait(text, attachments, timeout=TURN_TIMEOUT)
            except TurnCancelledError:
                return {"stopReason": "cancelled"}
            except PromptRejectedError as exc:
                self._send({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(exc)}})
                return {"stopReason": "refusal"}
            except TurnAbortedError as exc:
                raise RpcError(INTERNAL_ERROR, str(exc)) from None
            except TurnError as exc:
                raise RpcError(INVALID_PARAMS, f"session/prompt: {exc}") from None
            except TimeoutError:
                self.host.cancel_turn()
                raise RpcError(
                    INTERNAL_ERROR, f"the turn took more than {TURN_TIMEOUT:g} s and was cancelled"
                ) from None
        return {"stopReason": "end_turn"}

    async def _command(self, name: str, args: str) -> dict[str, Any]:
        result = await self.host.run_command(name, args)
        said = f"/{name}: done" if result.ok else f"/{name}: {result.status}: {result.error or 'no reason given'}"
        self._send({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": said}})
        await self.host.wait_idle(TURN_TIMEOUT)  # the command may have sent a prompt
        return {"stopReason": "end_turn"}

    def cancel(self) -> None:
        """``session/cancel``: the running turn is cancelled, and the prompts waiting behind it."""
        self._cancels += 1
        self.host.cancel_turn()

    # -- events -----------------------------------------------------------------------

    def _send(self, update: dict[str, Any]) -> None:
        try:
            self._notify("session/update", {"sessionId": self.session_id, "update": update})
        except (ConnectionClosed, ConnectionError, OSError):
            pass  # the client is gone: the connection's end stops the session

    def _on_event(self, event: Event) -> None:
        kind = event["type"]
        if kind in MAPPED_EVENTS:
            for update in self._mapper.map(event):
                self._send(update)
        elif kind == "permission.requested" and not event["data"].get("resolvedByHook"):
            task = asyncio.ensure_future(self._ask(event["data"]))
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)

    async def _ask(self, data: dict[str, Any]) -> None:
        """Ask the client about a permission request; its answer resolves it (a failed ask
        or an answer that is not one of the options denies)."""
        request_id = str(data.get("requestId"))
        asked = data.get("permissionRequest")
        asked = asked if isinstance(asked, dict) else {}
        call_id = str(asked.get("toolCallId") or request_id)
        title = self._mapper.tool_title(call_id) or str(asked.get("toolName") or asked.get("kind") or "permission")
        tool_call: dict[str, Any] = {"toolCallId": call_id, "title": title, "kind": "other", "status": "pending"}
        if "toolArgs" in asked:
            tool_call["rawInput"] = asked["toolArgs"]
        reason = asked.get("hookMessage") or asked.get("toolDescription")
        if isinstance(reason, str) and reason:
            tool_call["content"] = [{"type": "content", "content": {"type": "text", "text": reason}}]
        params = {"sessionId": self.session_id, "toolCall": tool_call, "options": list(PERMISSION_OPTIONS)}
        approved = False
        try:
            answer = PermissionAnswer.model_validate(await self._request("session/request_permission", params))
            approved = answer.outcome.outcome == "selected" and answer.outcome.option_id == "allow_once"
        except (RpcError, ConnectionClosed, ValueError) as exc:
            print(f"extensions acp: the permission request was not answered ({exc}); denied", file=sys.stderr)
        self.host.resolve_permission(request_id, approved)


def prompt_input(blocks: Sequence[ContentBlock]) -> tuple[str, list[dict[str, Any]]]:
    """The host's prompt text and attachments for a prompt's content blocks (see the module).

    Raises:
        RpcError: ``INVALID_PARAMS`` for an image or audio block (this agent takes neither).
    """
    texts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ResourceLinkBlock):
            path = _file_path(block.uri)
            if path is not None:
                attachments.append({"type": "file", "path": path})
            else:
                texts.append(block.uri)
        elif isinstance(block, ResourceBlock):
            resource = block.resource
            body = resource.text if resource.text is not None else "(binary content, not shown)"
            texts.append(f"\n--- {resource.uri}\n{body}\n---")
        else:
            raise RpcError(
                INVALID_PARAMS,
                f"session/prompt: this agent takes no {block.type} content (see promptCapabilities); send text",
            )
    return "\n".join(texts).strip(), attachments


def _file_path(uri: str) -> str | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None
