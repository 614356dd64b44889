"""Scripted stand-ins for the model APIs the real agents call, on 127.0.0.1.

Each server answers from a script of :data:`Turn` values: :class:`Call` (the model calls a
tool) or :class:`Say` (the model answers text and the turn ends). Which turn answers a request
is decided by the request itself, not by arrival order: the number of answers the model already
gave in the conversation it sends (assistant or model messages). So a retried request gets the
same answer, and the agents' side requests (a title, a summary, a routing decision: any request
that offers the model no tools) never use up the script; they get :data:`SIDE_ANSWER`. Past the
script's end the model says :data:`LAST_WORDS`.

A subagent's conversation is a separate conversation with the same model. Given ``agents``
(``{marker: script}``), a request whose system prompt (or instructions) holds ``marker`` is a
child's and is answered from that script, its answers counted in that conversation alone; a
request that holds no marker is the parent's, answered from ``script``. A child's request is
a turn of its conversation even when it offers no tools (an agent allowed none).

A turn may carry ``before``: a function the server runs, once, before it first answers that
turn (a test kills or stops a process there, at a known point of the agent's run).

Every request is kept (:attr:`ScriptedModel.requests`: path and raw body), so a test can say
what reached the model and what never did.

- :class:`AnthropicModel`: the Messages API (``POST /v1/messages``, server-sent events), for
  Claude Code (``ANTHROPIC_BASE_URL``).
- :class:`GeminiModel`: ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (and
  ``:generateContent``, ``:countTokens``), for Gemini CLI (``GOOGLE_GEMINI_BASE_URL``).
- :class:`ChatCompletionsModel`: ``POST /v1/chat/completions`` in the format of
  :mod:`chat_server`, for GitHub Copilot CLI in offline mode (``COPILOT_PROVIDER_BASE_URL``).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, NamedTuple

from chat_server import Answer, completion, stream_chunks

__all__ = [
    "LAST_WORDS",
    "SIDE_ANSWER",
    "AnthropicModel",
    "Call",
    "ChatCompletionsModel",
    "GeminiModel",
    "ModelRequest",
    "Say",
    "ScriptedModel",
    "Turn",
]

SIDE_ANSWER = "ok"
"""What a request that offers no tools gets (titles, summaries, routing)."""
LAST_WORDS = "That is all."
"""What the model says once its script is used up."""


@dataclass(frozen=True)
class Call:
    """The model calls ``tool`` with ``arguments``."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    before: Callable[[], object] | None = None

    def with_before(self, before: Callable[[], object]) -> Call:
        """This call, with ``before`` run once before the model first makes it."""
        return replace(self, before=before)


@dataclass(frozen=True)
class Say:
    """The model answers ``text``; the agent's turn ends."""

    text: str
    before: Callable[[], object] | None = None


Turn = Call | Say


class ModelRequest(NamedTuple):
    """One request the agent made: its path (with the query) and its body as sent."""

    method: str
    path: str
    body: str

    def json(self) -> Any:
        """The body as JSON (``None`` for an empty body)."""
        return json.loads(self.body) if self.body else None


class ScriptedModel:
    """A model API on 127.0.0.1 answering from ``script``; use as a context manager.

    Subclasses say how a request counts the model's earlier answers, whether it offers tools,
    and how a turn is written on the wire.
    """

    name: ClassVar[str] = "model"

    def __init__(self, script: Sequence[Turn], agents: Mapping[str, Sequence[Turn]] | None = None) -> None:
        self.script = tuple(script)
        self.agents = {marker: tuple(turns) for marker, turns in (agents or {}).items()}
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()
        self._done_before: set[tuple[str | None, int]] = set()
        self._ready: Callable[[], bool] | None = None
        self._ready_timeout = 0.0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=self.name, daemon=True)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def hold_answers_until(self, ready: Callable[[], bool], timeout: float) -> None:
        """Answer no conversation request before ``ready()`` holds: checked every 50 ms, for at
        most ``timeout`` seconds per request (then it is answered anyway)."""
        self._ready, self._ready_timeout = ready, timeout

    def _wait_until_ready(self) -> None:
        ready = self._ready
        if ready is None:
            return
        deadline = time.monotonic() + self._ready_timeout
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)

    # What reached the model.

    def bodies(self) -> str:
        """Every request body, one per line: what a test searches for what reached the model."""
        with self._lock:
            return "\n".join(request.body for request in self.requests)

    def posted(self) -> list[Any]:
        """The bodies of every POST request, parsed, in order (side requests included)."""
        with self._lock:
            requests = list(self.requests)
        return [request.json() for request in requests if request.method == "POST" and request.body]

    def conversation_requests(self, agent: str | None = None) -> list[dict[str, Any]]:
        """The bodies of one conversation's requests, in order: the agent's own (``agent``
        unset; those that offered tools), else the child's whose system prompt holds ``agent``."""
        return [
            body
            for body in self.posted()
            if isinstance(body, dict)
            and self.conversation_of(body) == agent
            and (agent is not None or self.offers_tools(body))
        ]

    def conversation_of(self, body: dict[str, Any]) -> str | None:
        """The marker of the child conversation ``body`` belongs to (``None``: the agent's own)."""
        if not self.agents:
            return None
        system = self.system_text(body)
        return next((marker for marker in self.agents if marker in system), None)

    def tool_names(self) -> list[str]:
        """The tool names the agent offered the model in its first conversation request."""
        requests = self.conversation_requests()
        return self.offered_tools(requests[0]) if requests else []

    def tool_results(self) -> list[str]:
        """What the agent told the model each tool call gave, in order (from its last request)."""
        requests = self.conversation_requests()
        return self.results_in(requests[-1]) if requests else []

    def log(self) -> str:
        """The request log, for a failing test's message: each request's method and path, then
        the tool results the model was given."""
        with self._lock:
            lines = [f"{r.method} {r.path} ({len(r.body)} bytes)" for r in self.requests] or ["(no requests)"]
        results = self.tool_results()
        lines += [f"tool result {n}: {result[:1500]}" for n, result in enumerate(results, 1)]
        return "\n".join(lines)

    # The wire, per API.

    def offers_tools(self, body: dict[str, Any]) -> bool:
        return bool(self.offered_tools(body))

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def system_text(self, body: dict[str, Any]) -> str:
        """The request's system prompt or instructions, as text."""
        raise NotImplementedError

    def answers_so_far(self, body: dict[str, Any]) -> int:
        raise NotImplementedError

    def results_in(self, body: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], turn: Turn) -> None:
        raise NotImplementedError

    def route(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> bool:
        """Answer a request that is not a model turn (``False``: it is one)."""
        return False

    # Shared machinery.

    def turn_for(self, body: dict[str, Any]) -> Turn:
        """The turn that answers ``body``, running its ``before`` the first time."""
        conversation = self.conversation_of(body)
        if conversation is None and not self.offers_tools(body):
            return Say(SIDE_ANSWER)
        script = self.script if conversation is None else self.agents[conversation]
        index = self.answers_so_far(body)
        if index >= len(script):
            return Say(LAST_WORDS)
        turn = script[index]
        with self._lock:
            first = (conversation, index) not in self._done_before
            self._done_before.add((conversation, index))
        if first and turn.before is not None:
            turn.before()
        return turn

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _record(self) -> str:
                length = int(self.headers.get("content-length") or 0)
                text = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                with model._lock:
                    model.requests.append(ModelRequest(self.command, self.path, text))
                return text

            def do_HEAD(self) -> None:
                self._record()
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record()
                send_json(self, 404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                text = self._record()
                try:
                    body = json.loads(text) if text else {}
                except ValueError:
                    body = {}
                if not isinstance(body, dict):
                    body = {}
                if model.route(self, body):
                    return
                model._wait_until_ready()
                try:
                    model.respond(self, body, model.turn_for(body))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the agent went away mid-answer

        return Handler


def send_json(handler: BaseHTTPRequestHandler, code: int, value: Any) -> None:
    data = json.dumps(value).encode()
    handler.send_response(code)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_events(handler: BaseHTTPRequestHandler, events: Iterator[tuple[str | None, Any]]) -> None:
    """Server-sent events: ``(event name or None, data)``; the connection closes after them."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        handler.wfile.write(f"{head}data: {text}\n\n".encode())
        handler.wfile.flush()


def _texts(value: Any) -> str:
    """The text of a system prompt given as a string, a list of text blocks or parts, or
    an object with ``parts``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _texts(value.get("parts", value.get("text", "")))
    if isinstance(value, list):
        return "\n".join(_texts(item) for item in value)
    return ""


def _count(messages: Any, role: str) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(1 for message in messages if isinstance(message, dict) and message.get("role") == role)


class AnthropicModel(ScriptedModel):
    """The Anthropic Messages API, streamed as Claude Code asks for it."""

    name = "anthropic-model"

    def __init__(self, script: Sequence[Turn], agents: Mapping[str, Sequence[Turn]] | None = None) -> None:
        super().__init__(script, agents)
        self._answers = itertools.count(1)

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        tools = body.get("tools")
        return [t["name"] for t in tools if isinstance(t, dict) and "name" in t] if isinstance(tools, list) else []

    def system_text(self, body: dict[str, Any]) -> str:
        return _texts(body.get("system"))

    def answers_so_far(self, body: dict[str, Any]) -> int:
        return _count(body.get("messages"), "assistant")

    def results_in(self, body: dict[str, Any]) -> list[str]:
        found = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, list):
                        inner = "\n".join(str(part.get("text", part)) for part in inner if isinstance(part, dict))
                    found.append(str(inner))
        return found

    def route(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> bool:
        if handler.path.split("?")[0].endswith("/count_tokens"):
            send_json(handler, 200, {"input_tokens": 100})
            return True
        return False

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], turn: Turn) -> None:
        model = str(body.get("model", "claude"))
        with self._lock:  # Claude Code merges the assistant messages that share an id
            number = next(self._answers)
        if isinstance(turn, Call):
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{number:02d}", "name": turn.tool, "input": {}}
            delta: dict[str, Any] = {"type": "input_json_delta", "partial_json": json.dumps(dict(turn.arguments))}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": turn.text}
            stop = "end_turn"
        if not body.get("stream"):
            whole = {**block, "input": dict(turn.arguments)} if isinstance(turn, Call) else {**block, "text": turn.text}
            send_json(handler, 200, _anthropic_message(number, model, [whole], stop))
            return
        start = _anthropic_message(number, model, [], None)
        send_events(
            handler,
            iter(
                [
                    ("message_start", {"type": "message_start", "message": start}),
                    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
            ),
        )


def _anthropic_message(number: int, model: str, content: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
    return {
        "id": f"msg_{number:02d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1 if stop is None else 5},
    }


class GeminiModel(ScriptedModel):
    """The Gemini API's ``streamGenerateContent?alt=sse``, as Gemini CLI calls it."""

    name = "gemini-model"

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        names: list[str] = []
        tools = body.get("tools")
        for tool in tools if isinstance(tools, list) else []:
            for declaration in tool.get("functionDeclarations") or [] if isinstance(tool, dict) else []:
                if isinstance(declaration, dict) and "name" in declaration:
                    names.append(declaration["name"])
        return names

    def system_text(self, body: dict[str, Any]) -> str:
        return _texts(body.get("systemInstruction"))

    def answers_so_far(self, body: dict[str, Any]) -> int:
        return _count(body.get("contents"), "model")

    def results_in(self, body: dict[str, Any]) -> list[str]:
        found = []
        for content in body.get("contents") or []:
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if isinstance(part, dict) and "functionResponse" in part:
                    found.append(json.dumps(part["functionResponse"].get("response")))
        return found

    def route(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> bool:
        path = handler.path.split("?")[0]
        if path.endswith(":countTokens"):
            send_json(handler, 200, {"totalTokens": 100})
            return True
        if not (path.endswith(":streamGenerateContent") or path.endswith(":generateContent")):
            send_json(handler, 404, {"error": {"code": 404, "message": f"no route {handler.path}"}})
            return True
        return False

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], turn: Turn) -> None:
        if isinstance(turn, Call):
            part: dict[str, Any] = {"functionCall": {"name": turn.tool, "args": dict(turn.arguments)}}
        else:
            part = {"text": turn.text}
        response = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        }
        if handler.path.split("?")[0].endswith(":generateContent"):
            send_json(handler, 200, response)
        else:
            send_events(handler, iter([(None, response)]))


class ChatCompletionsModel(ScriptedModel):
    """OpenAI Chat Completions (streamed or whole, as asked), as Copilot CLI's offline mode calls it."""

    name = "chat-completions-model"

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        tools = body.get("tools")
        names: list[str] = []
        for tool in tools if isinstance(tools, list) else []:
            function = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(function, dict) and "name" in function:
                names.append(function["name"])
        return names

    def system_text(self, body: dict[str, Any]) -> str:
        messages = body.get("messages")
        system = [
            message.get("content")
            for message in (messages if isinstance(messages, list) else [])
            if isinstance(message, dict) and message.get("role") in ("system", "developer")
        ]
        return _texts(system)

    def answers_so_far(self, body: dict[str, Any]) -> int:
        return _count(body.get("messages"), "assistant")

    def results_in(self, body: dict[str, Any]) -> list[str]:
        messages = body.get("messages") or []
        return [
            str(message.get("content"))
            for message in messages
            if isinstance(message, dict) and message.get("role") == "tool"
        ]

    def route(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> bool:
        if not handler.path.split("?")[0].endswith("/chat/completions"):
            send_json(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return True
        return False

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], turn: Turn) -> None:
        answer = Answer(tool_calls=[(turn.tool, dict(turn.arguments))]) if isinstance(turn, Call) else Answer(turn.text)
        model = str(body.get("model", ""))
        if not body.get("stream"):
            send_json(handler, 200, completion(answer, model))
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks: Iterator[tuple[str | None, Any]] = (
            (None, chunk) for chunk in stream_chunks(answer, model, include_usage)
        )
        send_events(handler, _then_done(chunks))


def _then_done(events: Iterator[tuple[str | None, Any]]) -> Iterator[tuple[str | None, Any]]:
    yield from events
    yield None, "[DONE]"
