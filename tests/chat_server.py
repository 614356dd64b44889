"""A Chat Completions endpoint for tests: a real HTTP server on loopback, answering from a script.

Each ``POST .../chat/completions`` takes the next reply of the script: an :class:`Answer` (text,
tool calls, usage), sent streamed (server-sent events, as the API streams) or whole, as the
request asks; a :class:`Status` (an error status with a body); or a :class:`Hold`, which keeps the
request open until released (a turn in flight, for cancelling). ``GET .../models`` lists
``models`` (404 when ``None``). Every request's JSON body is kept in ``requests``.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Answer", "ChatServer", "Hold", "Reply", "Status", "completion", "stream_chunks"]


@dataclass(frozen=True)
class Answer:
    """A reply of the model: ``text`` (streamed in ``pieces`` when given), and tool calls."""

    text: str = ""
    tool_calls: Sequence[tuple[str, Any]] = ()
    usage: tuple[int, int] | None = (11, 7)
    pieces: Sequence[str] = ()


@dataclass(frozen=True)
class Status:
    """An HTTP error answer."""

    code: int
    body: Any = field(default_factory=lambda: {"error": {"message": "scripted error", "type": "test"}})
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Hold:
    """Keep the request open until ``released`` is set (bounded), then answer ``then``."""

    released: threading.Event
    then: Answer = Answer("late answer")
    arrived: threading.Event = field(default_factory=threading.Event)


Reply = Answer | Status | Hold


class ChatServer:
    """The server; use as a context manager. ``base_url`` ends with ``/v1``."""

    def __init__(self, script: Sequence[Reply], models: Sequence[str] | None = ("test-model",)) -> None:
        self.script: deque[Reply] = deque(script)
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="chat-server", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for reply in self.script:
            if isinstance(reply, Hold):
                reply.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if not self.script:
                return Status(500, {"error": {"message": "the test's script has no more replies"}})
            return self.script.popleft()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if not self.path.endswith("/models") or server.models is None:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]
                self._json(200, {"object": "list", "data": data})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server._next(body)
                if isinstance(reply, Hold):
                    reply.arrived.set()
                    reply.released.wait(timeout=30)
                    reply = reply.then
                if isinstance(reply, Status):
                    self._json(reply.code, reply.body, reply.headers)
                elif body.get("stream"):
                    self._stream(reply, body)
                else:
                    self._json(200, completion(reply, body.get("model", "")))

            def _json(self, code: int, value: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
                data = json.dumps(value).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, text in headers:
                    self.send_header(name, text)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, answer: Answer, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                try:
                    for chunk in stream_chunks(answer, body.get("model", ""), include_usage):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away (a cancelled turn)

        return Handler


def _usage(answer: Answer) -> dict[str, Any] | None:
    if answer.usage is None:
        return None
    given, got = answer.usage
    return {"prompt_tokens": given, "completion_tokens": got, "total_tokens": given + got}


def _calls(answer: Answer) -> list[dict[str, Any]]:
    return [
        {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        for n, (name, arguments) in enumerate(answer.tool_calls)
    ]


def completion(answer: Answer, model: str) -> dict[str, Any]:
    """The whole (not streamed) Chat Completions answer for ``answer``."""
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.tool_calls:
        message["tool_calls"] = _calls(answer)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if answer.tool_calls else "stop"}],
        "usage": _usage(answer),
    }


def stream_chunks(answer: Answer, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The streamed Chat Completions chunks for ``answer`` (without the final ``[DONE]``)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }

    yield chunk({"role": "assistant", "content": ""})
    for piece in answer.pieces or ([answer.text] if answer.text else []):
        yield chunk({"content": piece})
    for n, call in enumerate(_calls(answer)):
        head = {"index": n, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        yield chunk({"tool_calls": [{**head, "function": {**head["function"], "arguments": ""}}]})
        text = call["function"]["arguments"]
        middle = len(text) // 2  # the arguments arrive in two pieces, as models stream them
        for part in (text[:middle], text[middle:]):
            yield chunk({"tool_calls": [{"index": n, "function": {"arguments": part}}]})
    yield chunk({}, "tool_calls" if answer.tool_calls else "stop")
    if include_usage and answer.usage is not None:
        yield {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": _usage(answer),
        }
