"""Unit tests for extension_protocol.connection over an in-memory duplex (no processes, no sockets)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from extension_protocol import connection as connection_module
from extension_protocol.connection import (
    NOTICE_DELAY,
    PROGRESS_DELAY,
    Connection,
    ConnectionClosed,
    Framer,
    QueueOverflow,
    RpcError,
    error_to_wire,
)
from extension_protocol.framing import (
    MAX_DEPTH,
    FrameDecoder,
    FramingError,
    MessageTooDeep,
    MessageTooLarge,
    encode_message,
    frame,
    read_message,
)
from extension_protocol.protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NOT_SUPPORTED,
    PARSE_ERROR,
    REQUEST_CANCELLED,
)
from helpers import PipeWriter


class PushInbox:
    """An inbox delivering to callbacks, as :class:`~extension_protocol.pipes.PipeReader` does
    (bytes fed before ``deliver_to`` are kept for it), with a StreamReader's feeding methods."""

    def __init__(self) -> None:
        self._early: list[bytes] = []
        self._end: tuple[Exception | None] | None = None
        self._on_data: Callable[[bytes], None] | None = None
        self._on_end: Callable[[Exception | None], None] | None = None

    def deliver_to(self, on_data: Callable[[bytes], None], on_end: Callable[[Exception | None], None]) -> None:
        self._on_data, self._on_end = on_data, on_end
        for chunk in self._early:
            on_data(chunk)
        if self._end is not None:
            on_end(self._end[0])

    def feed_data(self, data: bytes) -> None:
        if self._on_data is None:
            self._early.append(data)
        else:
            self._on_data(data)

    def feed_eof(self) -> None:
        self._finish(None)

    def set_exception(self, error: Exception) -> None:
        self._finish(error)

    def _finish(self, error: Exception | None) -> None:
        if self._end is None:
            self._end = (error,)
            if self._on_end is not None:
                self._on_end(error)


Inbox = asyncio.StreamReader | PushInbox


@pytest.fixture(autouse=True, params=["stream", "push"])
def inbox_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with the connection reading a StreamReader, then a PushReader."""
    monkeypatch.setattr(
        sys.modules[__name__], "new_inbox", asyncio.StreamReader if request.param == "stream" else PushInbox
    )
    return str(request.param)


def new_inbox() -> Inbox:
    """What a Connection under test reads from (replaced per test by the inbox_kind fixture)."""
    return asyncio.StreamReader()


def frames_of(writer: PipeWriter) -> list[dict[str, Any]]:
    """Decode every frame a PipeWriter has written, in order (a write may hold several)."""
    from extension_protocol.framing import FrameDecoder

    return FrameDecoder().feed(b"".join(writer.chunks))


class Pair:
    """Two Connections wired to each other, each with its serve() task running."""

    def __init__(self, a: Connection, b: Connection, a_writer: PipeWriter, b_writer: PipeWriter) -> None:
        self.a, self.b = a, b
        self.a_writer, self.b_writer = a_writer, b_writer
        self.a_task = asyncio.ensure_future(a.serve())
        self.b_task = asyncio.ensure_future(b.serve())


@asynccontextmanager
async def duplex(
    *,
    a_kwargs: dict[str, Any] | None = None,
    b_kwargs: dict[str, Any] | None = None,
) -> AsyncIterator[Pair]:
    """Yield a connected Pair; on exit close both sides and wait for both serve() tasks."""
    a_in, b_in = new_inbox(), new_inbox()
    a_writer, b_writer = PipeWriter(b_in), PipeWriter(a_in)
    a = Connection(a_in, a_writer, **(a_kwargs or {}))
    b = Connection(b_in, b_writer, **(b_kwargs or {}))
    pair = Pair(a, b, a_writer, b_writer)
    try:
        yield pair
    finally:
        a.close()
        b.close()
        async with asyncio.timeout(5):
            await asyncio.gather(pair.a_task, pair.b_task, return_exceptions=True)


class Raw:
    """One Connection driven by hand: the test writes its input frames and reads its output."""

    def __init__(self, conn: Connection, inbox: Inbox, outbox: asyncio.StreamReader, writer: PipeWriter) -> None:
        self.conn, self.inbox, self.outbox, self.writer = conn, inbox, outbox, writer

    def send(self, message: dict[str, Any]) -> None:
        self.inbox.feed_data(encode_message(message))

    async def receive(self) -> dict[str, Any] | None:
        async with asyncio.timeout(5):
            return await read_message(self.outbox)


def raw(**kwargs: Any) -> Raw:
    """A Connection whose input the test feeds and whose output the test reads (no serve task)."""
    inbox, outbox = new_inbox(), asyncio.StreamReader()
    writer = PipeWriter(outbox)
    return Raw(Connection(inbox, writer, **kwargs), inbox, outbox, writer)


@asynccontextmanager
async def serving(r: Raw) -> AsyncIterator[asyncio.Task[None]]:
    """Run r.conn.serve() for the block; on exit end its input and wait for serve to finish."""
    task = asyncio.ensure_future(r.conn.serve())
    try:
        yield task
    finally:
        r.inbox.feed_eof()
        async with asyncio.timeout(5):
            await asyncio.gather(task, return_exceptions=True)


def ids(*values: int | str) -> Iterator[int | str]:
    """A fixed id generator."""
    return iter(values)


# -- requests and responses --------------------------------------------------------------


def test_request_returns_the_result_of_the_peer_handler() -> None:
    """A request is answered with what the peer's handler returned for its params."""

    async def main() -> Any:
        async with duplex(b_kwargs={"handlers": {"add": lambda p: p["x"] + p["y"]}}) as pair:
            async with asyncio.timeout(5):
                return await pair.a.request("add", {"x": 2, "y": 40})

    assert asyncio.run(main()) == 42


def test_default_ids_are_increasing_integers_and_answers_are_matched_by_them() -> None:
    """Without an id generator the ids are 1, 2, ... and each answer goes to its own request."""

    async def main() -> tuple[list[Any], list[dict[str, Any]]]:
        async with duplex(b_kwargs={"handlers": {"echo": lambda p: p}}) as pair:
            async with asyncio.timeout(5):
                results = await asyncio.gather(*(pair.a.request("echo", n) for n in ("one", "two", "three")))
            return list(results), frames_of(pair.a_writer)

    results, sent = asyncio.run(main())
    assert results == ["one", "two", "three"]
    assert [m["id"] for m in sent] == [1, 2, 3]
    assert all(isinstance(m["id"], int) for m in sent)


def test_string_ids_from_the_generator_are_used_on_the_wire_and_correlated() -> None:
    """A fixed string id generator's ids appear on the wire, and answers resolve by them."""

    async def main() -> tuple[list[Any], list[dict[str, Any]], list[dict[str, Any]]]:
        async with duplex(
            a_kwargs={"id_generator": ids("a", "b")},
            b_kwargs={"handlers": {"double": lambda p: p * 2}},
        ) as pair:
            async with asyncio.timeout(5):
                first = await pair.a.request("double", 5)
                second = await pair.a.request("double", 7)
            return [first, second], frames_of(pair.a_writer), frames_of(pair.b_writer)

    results, sent, answers = asyncio.run(main())
    assert results == [10, 14]
    assert sent == [
        {"jsonrpc": "2.0", "id": "a", "method": "double", "params": 5},
        {"jsonrpc": "2.0", "id": "b", "method": "double", "params": 7},
    ]
    assert answers == [
        {"jsonrpc": "2.0", "id": "a", "result": 10},
        {"jsonrpc": "2.0", "id": "b", "result": 14},
    ]


def test_answers_arriving_out_of_order_resolve_the_matching_requests() -> None:
    """Correlation is by id, not by arrival order."""

    async def main() -> tuple[list[dict[str, Any]], list[Any]]:
        r = raw(id_generator=ids("a", "b", "c"))
        async with serving(r):
            futures = [r.conn.send_request("m", n) for n in (1, 2, 3)]
            sent = [await r.receive() for _ in range(3)]
            for request_id, value in (("c", "third"), ("a", "first"), ("b", "second")):
                r.send({"jsonrpc": "2.0", "id": request_id, "result": value})
            async with asyncio.timeout(5):
                results = list(await asyncio.gather(*futures))
        return [m for m in sent if m is not None], results

    sent, results = asyncio.run(main())
    assert [m["id"] for m in sent] == ["a", "b", "c"]
    assert results == ["first", "second", "third"]


def test_requests_made_one_after_another_reach_the_stream_in_that_order() -> None:
    """send_request queues each frame at once, in order; closing flushes what was queued."""

    async def main() -> list[dict[str, Any]]:
        r = raw(id_generator=ids("a", "b", "c"))
        futures = [r.conn.send_request(name) for name in ("first", "second", "third")]
        r.conn.close()
        for future in futures:
            with pytest.raises(ConnectionClosed):
                await future
        return frames_of(r.writer)

    sent = asyncio.run(main())
    assert [(m["id"], m["method"]) for m in sent] == [("a", "first"), ("b", "second"), ("c", "third")]


def test_a_request_without_params_has_no_params_key() -> None:
    """params=None is left out of the request object rather than sent as null."""

    async def main() -> dict[str, Any] | None:
        r = raw(id_generator=ids("a"))
        future = r.conn.send_request("ping")
        message = await r.receive()
        r.conn.close()
        with pytest.raises(ConnectionClosed):
            await future
        return message

    assert asyncio.run(main()) == {"jsonrpc": "2.0", "id": "a", "method": "ping"}


def test_a_result_of_null_is_delivered_as_none() -> None:
    """A handler that returns None answers with result null, which request() returns as None."""

    async def main() -> tuple[Any, list[dict[str, Any]]]:
        async with duplex(
            a_kwargs={"id_generator": ids("a")}, b_kwargs={"handlers": {"nothing": lambda p: None}}
        ) as pair:
            async with asyncio.timeout(5):
                result = await pair.a.request("nothing")
            return result, frames_of(pair.b_writer)

    result, answers = asyncio.run(main())
    assert result is None
    assert answers == [{"jsonrpc": "2.0", "id": "a", "result": None}]


# -- notifications -----------------------------------------------------------------------


def test_notification_reaches_its_handler_and_is_never_answered() -> None:
    """notify() delivers params to the notification handler and the peer writes nothing back."""

    async def main() -> tuple[list[Any], list[dict[str, Any]], list[dict[str, Any]]]:
        seen: list[Any] = []
        async with duplex(
            a_kwargs={"id_generator": ids("sync")},
            b_kwargs={
                "notification_handlers": {"event": seen.append},
                "handlers": {"sync": lambda p: "done"},
            },
        ) as pair:
            pair.a.notify("event", {"n": 1})
            pair.a.notify("event", {"n": 2})
            async with asyncio.timeout(5):
                # The stream is ordered: once this is answered the notifications were handled.
                assert await pair.a.request("sync") == "done"
            return seen, frames_of(pair.a_writer), frames_of(pair.b_writer)

    seen, sent, answers = asyncio.run(main())
    assert seen == [{"n": 1}, {"n": 2}]
    assert sent[0] == {"jsonrpc": "2.0", "method": "event", "params": {"n": 1}}
    assert all("id" not in m for m in sent[:2])
    assert answers == [{"jsonrpc": "2.0", "id": "sync", "result": "done"}]


def test_notification_without_params_has_no_params_key() -> None:
    """notify(method) sends no params member."""

    async def main() -> dict[str, Any] | None:
        r = raw()
        r.conn.notify("ready")
        return await r.receive()

    assert asyncio.run(main()) == {"jsonrpc": "2.0", "method": "ready"}


def test_async_notification_handler_is_awaited() -> None:
    """A coroutine notification handler runs to completion."""

    async def main() -> Any:
        got: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def on_event(params: Any) -> None:
            got.set_result(params)

        async with duplex(b_kwargs={"notification_handlers": {"event": on_event}}) as pair:
            pair.a.notify("event", [1, 2])
            async with asyncio.timeout(5):
                return await got

    assert asyncio.run(main()) == [1, 2]


def test_unknown_notification_is_ignored_and_serving_continues() -> None:
    """A notification nobody handles gets no answer and does not stop the connection."""

    async def main() -> tuple[Any, list[dict[str, Any]]]:
        async with duplex(a_kwargs={"id_generator": ids("a")}, b_kwargs={"handlers": {"ok": lambda p: "ok"}}) as pair:
            pair.a.notify("nobody.listens", {"x": 1})
            async with asyncio.timeout(5):
                result = await pair.a.request("ok")
            return result, frames_of(pair.b_writer)

    result, answers = asyncio.run(main())
    assert result == "ok"
    assert answers == [{"jsonrpc": "2.0", "id": "a", "result": "ok"}]


def test_failing_notification_handler_is_not_answered_and_serving_continues() -> None:
    """An exception in a notification handler has nobody to go to; the loop keeps running."""

    def broken(params: Any) -> None:
        raise RuntimeError("boom")

    async def main() -> tuple[Any, list[dict[str, Any]]]:
        async with duplex(
            a_kwargs={"id_generator": ids("a")},
            b_kwargs={"notification_handlers": {"broken": broken}, "handlers": {"ok": lambda p: 1}},
        ) as pair:
            pair.a.notify("broken")
            async with asyncio.timeout(5):
                result = await pair.a.request("ok")
            assert not pair.b_task.done()
            return result, frames_of(pair.b_writer)

    result, answers = asyncio.run(main())
    assert result == 1
    assert answers == [{"jsonrpc": "2.0", "id": "a", "result": 1}]


def test_request_handlers_and_notification_handlers_are_separate_tables() -> None:
    """Requests to notification-only methods get METHOD_NOT_FOUND; notifications to request-only ones are dropped."""

    async def main() -> tuple[RpcError, list[Any], list[Any]]:
        req_calls: list[Any] = []
        note_calls: list[Any] = []

        def only_request(params: Any) -> str:
            req_calls.append(params)
            return "r"

        async with duplex(
            a_kwargs={"id_generator": ids("a", "b")},
            b_kwargs={
                "handlers": {"only.request": only_request},
                "notification_handlers": {"only.note": note_calls.append},
            },
        ) as pair:
            pair.a.notify("only.request", "as-note")
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await pair.a.request("only.note", "as-request")
                assert await pair.a.request("only.request", "real") == "r"
            return info.value, req_calls, note_calls

    error, req_calls, note_calls = asyncio.run(main())
    assert error.code == METHOD_NOT_FOUND
    assert req_calls == ["real"]
    assert note_calls == []


# -- inline vs async handlers ------------------------------------------------------------


def test_inline_handler_runs_inside_the_receive_loop_and_async_handler_in_its_own_task() -> None:
    """A plain function runs in the serve() task; a coroutine function runs in another task."""

    async def main() -> tuple[Any, Any, Any]:
        where: dict[str, Any] = {}

        def inline(params: Any) -> str:
            where["inline"] = asyncio.current_task()
            return "inline"

        async def spawned(params: Any) -> str:
            where["async"] = asyncio.current_task()
            return "async"

        async with duplex(b_kwargs={"handlers": {"inline": inline, "async": spawned}}) as pair:
            async with asyncio.timeout(5):
                assert await pair.a.request("inline") == "inline"
                assert await pair.a.request("async") == "async"
            return where["inline"], where["async"], pair.b_task

    inline_task, async_task, serve_task = asyncio.run(main())
    assert inline_task is serve_task
    assert async_task is not serve_task
    assert async_task is not None


def test_a_slow_async_handler_does_not_stall_other_requests() -> None:
    """While one async handler waits, later requests are still received and answered."""

    async def main() -> tuple[Any, Any, bool]:
        release = asyncio.Event()

        async def slow(params: Any) -> str:
            await release.wait()
            return "slow"

        async with duplex(b_kwargs={"handlers": {"slow": slow, "fast": lambda p: "fast"}}) as pair:
            slow_future = asyncio.ensure_future(pair.a.request("slow"))
            async with asyncio.timeout(5):
                fast = await pair.a.request("fast")
                slow_was_pending = not slow_future.done()
                release.set()
                slow_result = await slow_future
            return fast, slow_result, slow_was_pending

    fast, slow_result, slow_was_pending = asyncio.run(main())
    assert fast == "fast"
    assert slow_was_pending
    assert slow_result == "slow"


def test_handlers_registered_later_replace_earlier_ones() -> None:
    """on_request for an existing method replaces the handler."""

    async def main() -> Any:
        async with duplex(b_kwargs={"handlers": {"m": lambda p: "old"}}) as pair:
            pair.b.on_request("m", lambda p: "new")
            async with asyncio.timeout(5):
                return await pair.a.request("m")

    assert asyncio.run(main()) == "new"


# -- errors from handlers ----------------------------------------------------------------


def test_inline_handler_exception_becomes_internal_error_response() -> None:
    """A plain exception in an inline handler answers with INTERNAL_ERROR naming the exception."""

    def broken(params: Any) -> None:
        raise ValueError("bad value")

    async def main() -> tuple[RpcError, list[dict[str, Any]]]:
        async with duplex(a_kwargs={"id_generator": ids("a")}, b_kwargs={"handlers": {"m": broken}}) as pair:
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await pair.a.request("m")
            return info.value, frames_of(pair.b_writer)

    error, answers = asyncio.run(main())
    assert error.code == INTERNAL_ERROR
    assert error.message == "ValueError: bad value"
    assert answers == [
        {"jsonrpc": "2.0", "id": "a", "error": {"code": INTERNAL_ERROR, "message": "ValueError: bad value"}}
    ]


def test_async_handler_exception_becomes_internal_error_response() -> None:
    """A plain exception in a coroutine handler is mapped the same way."""

    async def broken(params: Any) -> None:
        raise KeyError("missing")

    async def main() -> RpcError:
        async with duplex(b_kwargs={"handlers": {"m": broken}}) as pair:
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await pair.a.request("m")
            return info.value

    error = asyncio.run(main())
    assert error.code == INTERNAL_ERROR
    assert error.message == "KeyError: 'missing'"


@pytest.mark.parametrize("make_async", [False, True])
def test_rpc_error_from_a_handler_passes_through_with_code_message_and_data(make_async: bool) -> None:
    """A handler raising RpcError answers with exactly its code, message and data."""

    def sync_handler(params: Any) -> None:
        raise RpcError(NOT_SUPPORTED, "not here", {"why": ["x", 1]})

    async def async_handler(params: Any) -> None:
        raise RpcError(NOT_SUPPORTED, "not here", {"why": ["x", 1]})

    handler = async_handler if make_async else sync_handler

    async def main() -> RpcError:
        async with duplex(b_kwargs={"handlers": {"m": handler}}) as pair:
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await pair.a.request("m")
            return info.value

    error = asyncio.run(main())
    assert (error.code, error.message, error.data) == (NOT_SUPPORTED, "not here", {"why": ["x", 1]})


def test_peer_error_response_is_raised_from_request_as_rpc_error() -> None:
    """An error object in the answer becomes RpcError with its code, message and data."""

    async def main() -> RpcError:
        r = raw(id_generator=ids("a"))
        async with serving(r):
            task = asyncio.ensure_future(r.conn.request("m"))
            await r.receive()
            r.send({"jsonrpc": "2.0", "id": "a", "error": {"code": -32000, "message": "nope", "data": 7}})
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await task
        return info.value

    error = asyncio.run(main())
    assert (error.code, error.message, error.data) == (-32000, "nope", 7)


def test_malformed_error_object_from_peer_becomes_internal_error() -> None:
    """An error that is not an object still fails the request, as INTERNAL_ERROR."""

    async def main() -> RpcError:
        r = raw(id_generator=ids("a"))
        async with serving(r):
            future = r.conn.send_request("m")
            r.send({"jsonrpc": "2.0", "id": "a", "error": "just a string"})
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await future
        return info.value

    error = asyncio.run(main())
    assert error.code == INTERNAL_ERROR
    assert "malformed error object" in error.message


def test_error_with_non_integer_code_from_peer_becomes_internal_error_code() -> None:
    """A non-integer error code is replaced by INTERNAL_ERROR, keeping the message."""

    async def main() -> RpcError:
        r = raw(id_generator=ids("a"))
        async with serving(r):
            future = r.conn.send_request("m")
            r.send({"jsonrpc": "2.0", "id": "a", "error": {"code": "E1", "message": "odd"}})
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await future
        return info.value

    error = asyncio.run(main())
    assert (error.code, error.message) == (INTERNAL_ERROR, "odd")


# -- error_to_wire and RpcError ----------------------------------------------------------


def test_error_to_wire_keeps_rpc_error_code_message_and_data() -> None:
    """An RpcError maps to its own fields; data is present only when set."""
    assert error_to_wire(RpcError(-32001, "taken", {"tool": "x"})) == {
        "code": -32001,
        "message": "taken",
        "data": {"tool": "x"},
    }
    assert error_to_wire(RpcError(-32001, "taken")) == {"code": -32001, "message": "taken"}


def test_error_to_wire_maps_other_exceptions_to_internal_error_with_type_name() -> None:
    """Any other exception is INTERNAL_ERROR with 'Type: message'."""
    assert error_to_wire(ZeroDivisionError("division by zero")) == {
        "code": INTERNAL_ERROR,
        "message": "ZeroDivisionError: division by zero",
    }


def test_rpc_error_str_names_the_code() -> None:
    """str(RpcError) gives the message, the code's short name and the number."""
    assert str(RpcError(METHOD_NOT_FOUND, "method not found: x")) == "method not found: x (method not found -32601)"
    assert str(RpcError(12345, "custom")) == "custom (error 12345)"


# -- unknown methods and invalid requests ------------------------------------------------


def test_unknown_method_is_answered_with_method_not_found() -> None:
    """A request for a method with no handler gets error -32601 naming the method."""

    async def main() -> tuple[RpcError, list[dict[str, Any]]]:
        async with duplex(a_kwargs={"id_generator": ids(9)}) as pair:
            async with asyncio.timeout(5):
                with pytest.raises(RpcError) as info:
                    await pair.a.request("no.such.method")
            return info.value, frames_of(pair.b_writer)

    error, answers = asyncio.run(main())
    assert error.code == METHOD_NOT_FOUND == -32601
    assert "no.such.method" in error.message
    assert answers[0]["id"] == 9
    assert answers[0]["error"]["code"] == -32601


@pytest.mark.parametrize(
    "message",
    [
        {"id": 7, "method": "m"},
        {"jsonrpc": "1.0", "id": 7, "method": "m"},
        {"jsonrpc": "2.0", "id": 7, "method": 5},
    ],
    ids=["no-jsonrpc", "jsonrpc-1.0", "method-not-a-string"],
)
def test_request_that_is_not_json_rpc_2_is_answered_with_invalid_request(message: dict[str, Any]) -> None:
    """A request without jsonrpc '2.0' (or with a non-string method) gets INVALID_REQUEST; no handler runs."""

    async def main() -> tuple[dict[str, Any] | None, list[Any]]:
        calls: list[Any] = []
        r = raw(handlers={"m": calls.append})
        async with serving(r):
            r.send(message)
            answer = await r.receive()
        return answer, calls

    answer, calls = asyncio.run(main())
    assert answer is not None
    assert answer["id"] == 7
    assert answer["error"]["code"] == INVALID_REQUEST == -32600
    assert "result" not in answer
    assert calls == []


def test_invalid_notification_is_dropped_silently() -> None:
    """A non-2.0 message without an id is not answered and does not stop serving."""

    async def main() -> tuple[dict[str, Any] | None, list[Any]]:
        calls: list[Any] = []
        r = raw(notification_handlers={"n": calls.append}, handlers={"ok": lambda p: "ok"})
        async with serving(r) as task:
            r.send({"jsonrpc": "1.0", "method": "n"})
            r.send({"jsonrpc": "2.0", "id": 1, "method": "ok"})
            answer = await r.receive()
            assert not task.done()
        return answer, calls

    answer, calls = asyncio.run(main())
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": "ok"}
    assert calls == []


def test_response_with_unknown_id_is_ignored() -> None:
    """An answer to a request nobody made is dropped and serving continues."""

    async def main() -> dict[str, Any] | None:
        r = raw(handlers={"ok": lambda p: "ok"})
        async with serving(r) as task:
            r.send({"jsonrpc": "2.0", "id": "never-sent", "result": 1})
            r.send({"jsonrpc": "2.0", "id": 2, "method": "ok"})
            answer = await r.receive()
            assert not task.done()
        return answer

    assert asyncio.run(main()) == {"jsonrpc": "2.0", "id": 2, "result": "ok"}


def test_response_with_an_unhashable_id_is_ignored_like_any_unknown_id() -> None:
    """While a request waits, an answer whose id is an array matches nothing: it is dropped, serve() goes on."""

    async def main() -> tuple[dict[str, Any] | None, BaseException | None]:
        r = raw(handlers={"ok": lambda p: "ok"}, id_generator=ids("a"))
        async with serving(r) as task:
            waiting = r.conn.send_request("m")
            waiting.add_done_callback(lambda f: f.exception())  # retrieved; it fails at close
            assert await r.receive() is not None
            r.send({"jsonrpc": "2.0", "id": [1], "result": 1})
            r.send({"jsonrpc": "2.0", "id": 2, "method": "ok"})
            receive = asyncio.ensure_future(r.receive())
            await asyncio.wait({receive, task}, timeout=5, return_when=asyncio.FIRST_COMPLETED)
            crashed = task.exception() if task.done() else None
            if not receive.done():
                receive.cancel()
            answer = (await asyncio.gather(receive, return_exceptions=True))[0]
        return (answer if isinstance(answer, dict) else None), crashed

    answer, crashed = asyncio.run(main())
    assert crashed is None, f"serve() crashed with {crashed!r}"
    assert answer == {"jsonrpc": "2.0", "id": 2, "result": "ok"}


# -- timeouts ----------------------------------------------------------------------------


def test_request_timeout_cancels_the_peers_handler_and_keeps_the_connection_serving() -> None:
    """No answer within timeout → TimeoutError and $/cancelRequest; the peer stops its handler."""

    async def main() -> tuple[list[dict[str, Any]], Any, bool, int]:
        release = asyncio.Event()

        async def slow(params: Any) -> str:
            await release.wait()
            return "late"

        async with duplex(
            a_kwargs={"id_generator": ids("a", "b")},
            b_kwargs={"handlers": {"slow": slow, "ping": lambda p: "pong"}},
        ) as pair:
            async with asyncio.timeout(5):
                with pytest.raises(TimeoutError):
                    await pair.a.request("slow", timeout=0.05)
                pending_after_timeout = len(pair.a._pending)
                release.set()
                # The late answer is written before the ping answer on the same ordered stream,
                # so once ping is answered the late answer has been read and dropped.
                pong = await pair.a.request("ping")
            still_serving = not pair.a_task.done()
            sent_by_a = frames_of(pair.a_writer)
            assert {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "a"}} in sent_by_a
            return frames_of(pair.b_writer), pong, still_serving, pending_after_timeout

    answers, pong, still_serving, pending_after_timeout = asyncio.run(main())
    assert pending_after_timeout == 0
    # Whether the cancel or the release reaches the handler first, the answer to "a" is
    # ignored by the requester and the connection goes on.
    assert answers[0] in (
        {"jsonrpc": "2.0", "id": "a", "error": {"code": REQUEST_CANCELLED, "message": "request cancelled"}},
        {"jsonrpc": "2.0", "id": "a", "result": "late"},
    )
    assert answers[1] == {"jsonrpc": "2.0", "id": "b", "result": "pong"}
    assert pong == "pong"
    assert still_serving


# -- end of the connection ---------------------------------------------------------------


def test_pending_requests_fail_with_connection_closed_on_eof() -> None:
    """When the peer's stream ends, serve() returns and every waiting request fails."""

    async def main() -> tuple[list[BaseException], bool]:
        r = raw(id_generator=ids("a", "b"))
        serve = asyncio.ensure_future(r.conn.serve())
        futures = [r.conn.send_request("m1"), r.conn.send_request("m2")]
        r.inbox.feed_eof()
        async with asyncio.timeout(5):
            await serve  # returns (does not raise) at a clean end of stream
            errors = list(await asyncio.gather(*futures, return_exceptions=True))
        return errors, r.writer.is_closing()

    errors, writer_closed = asyncio.run(main())
    assert all(isinstance(e, ConnectionClosed) for e in errors)
    assert "peer closed the connection" in str(errors[0])
    assert writer_closed


def test_framing_error_fails_pending_requests_and_is_raised_by_serve() -> None:
    """A broken frame closes the connection: serve() raises FramingError, pending requests fail."""

    async def main() -> tuple[BaseException | None, BaseException | None, bool, bool]:
        r = raw(id_generator=ids("a"))
        serve = asyncio.ensure_future(r.conn.serve())
        future = r.conn.send_request("m")
        r.inbox.feed_data(b"Content-Length: nope\r\n\r\n")
        async with asyncio.timeout(5):
            serve_error = (await asyncio.gather(serve, return_exceptions=True))[0]
            request_error = (await asyncio.gather(future, return_exceptions=True))[0]
        return serve_error, request_error, r.writer.is_closing(), r.conn.closed

    serve_error, request_error, writer_closed, closed = asyncio.run(main())
    assert isinstance(serve_error, FramingError)
    assert isinstance(request_error, ConnectionClosed)
    assert "protocol error" in str(request_error)
    assert writer_closed
    assert closed


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        (b"Content-Length: nope\r\n\r\n", {}, "Content-Length is not a number: 'nope'"),
        (b"Content-Length: 4\r\n\r\n{no}", {}, "body is not valid JSON: Expecting property name enclosed"),
        (b"Content-Length: 3\r\n\r\n[1]", {}, "body is JSON but not an object: '[1]'"),
        (b"Content-Length: 11\r\n\r\n", {"max_message_bytes": 10}, "message of 11 bytes exceeds the limit of 10 bytes"),
        (
            b"Content-Length: 200000\r\n\r\n" + b"[" * 100_000 + b"]" * 100_000,
            {},
            f"body is nested deeper than {MAX_DEPTH} levels",
        ),
        (b'Content-Length: 15\r\n\r\n{"a":{"b":[1]}}', {"max_depth": 2}, "body is nested deeper than 2 levels"),
        (
            b"Content-Length: 2\r\nContent-Length: 100000\r\n\r\n{}",
            {},
            "Content-Length appears twice in one header block ('2' and '100000'); a frame has exactly one",
        ),
        (
            b"Content-Length: 2\r\nX-Padding: " + b"a" * 200_000 + b"\r\n\r\n{}",
            {},
            "header block is too long: 200030 bytes, over the limit of 65536",
        ),
        (b"Content-Length: 2\n\n{}", {}, "header block has a line break other than \\r\\n"),
    ],
    ids=[
        "bad-header",
        "bad-json",
        "not-an-object",
        "oversize",
        "100000-deep",
        "deeper-than-max-depth",
        "content-length-twice",
        "200-kb-header-line",
        "lf-without-cr",
    ],
)
def test_a_framing_error_is_answered_with_one_parse_error_before_the_connection_closes(
    data: bytes, kwargs: dict[str, Any], message: str
) -> None:
    """The peer reads why (PARSE_ERROR, id null), then end of stream; serve() raises the
    FramingError and nothing reaches the loop's exception handler."""

    async def main() -> tuple[BaseException | None, list[dict[str, Any] | None], list[dict[str, Any]]]:
        loop_errors: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: loop_errors.append(context))
        r = raw(**kwargs)
        serve = asyncio.ensure_future(r.conn.serve())
        r.inbox.feed_data(data)
        async with asyncio.timeout(5):
            serve_error = (await asyncio.gather(serve, return_exceptions=True))[0]
        return serve_error, [await r.receive(), await r.receive()], loop_errors

    serve_error, (answer, end), loop_errors = asyncio.run(main())
    assert isinstance(serve_error, FramingError)
    assert answer is not None
    assert answer["error"]["message"].startswith(message)
    assert answer == {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": str(serve_error)}}
    assert end is None
    assert loop_errors == []


def test_a_stream_ending_inside_a_frame_is_not_answered() -> None:
    """The peer that cut its frame short is gone: serve() raises, and nothing is written."""

    async def main() -> tuple[BaseException | None, dict[str, Any] | None]:
        r = raw()
        serve = asyncio.ensure_future(r.conn.serve())
        r.inbox.feed_data(b'Content-Length: 10\r\n\r\n{"a')
        r.inbox.feed_eof()
        async with asyncio.timeout(5):
            serve_error = (await asyncio.gather(serve, return_exceptions=True))[0]
        return serve_error, await r.receive()

    serve_error, written = asyncio.run(main())
    assert isinstance(serve_error, FramingError)
    assert "stream ended after 3 of 10 body bytes" in str(serve_error)
    assert written is None


def test_an_error_with_a_null_id_is_the_reason_given_when_the_peer_then_closes() -> None:
    """An error about no request in particular fails nothing by itself (the peer may still
    answer); if the peer then closes, waiting requests fail with ConnectionClosed carrying it."""

    async def main() -> tuple[bool, BaseException | None]:
        r = raw(id_generator=ids("a"), handlers={"ok": lambda p: "ok"})
        async with serving(r):
            future = r.conn.send_request("m")
            r.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32050, "message": "too busy", "data": 1}})
            # A round trip after it: the error has been read, and the request still waits.
            r.send({"jsonrpc": "2.0", "id": 1, "method": "ok"})
            await r.receive()  # the request "m"
            assert await r.receive() == {"jsonrpc": "2.0", "id": 1, "result": "ok"}
            still_waiting = not future.done()
            r.inbox.feed_eof()
            async with asyncio.timeout(5):
                error = (await asyncio.gather(future, return_exceptions=True))[0]
        return still_waiting, error

    still_waiting, error = asyncio.run(main())
    assert still_waiting
    assert isinstance(error, ConnectionClosed)
    assert str(error) == "the peer closed the connection after saying: too busy (error -32050)"
    assert error.error is not None
    assert (error.error.code, error.error.message, error.error.data) == (-32050, "too busy", 1)


def test_stream_failure_ends_serve_quietly_and_fails_pending_requests() -> None:
    """A ConnectionError from the reader ends serve() without raising; waiting requests fail."""

    async def main() -> BaseException | None:
        r = raw(id_generator=ids("a"))
        serve = asyncio.ensure_future(r.conn.serve())
        future = r.conn.send_request("m")
        r.inbox.set_exception(ConnectionResetError("reset by peer"))
        async with asyncio.timeout(5):
            await serve  # returns (does not raise) when the stream fails
            error = (await asyncio.gather(future, return_exceptions=True))[0]
        return error

    error = asyncio.run(main())
    assert isinstance(error, ConnectionClosed)
    assert "stream failed" in str(error)


def test_close_fails_pending_requests_and_closes_the_outbound_stream() -> None:
    """close(reason) fails waiting requests with that reason and closes the writer."""

    async def main() -> tuple[BaseException | None, bool, bool]:
        r = raw(id_generator=ids("a"))
        future = r.conn.send_request("m")
        r.conn.close("shutting down")
        error = (await asyncio.gather(future, return_exceptions=True))[0]
        return error, r.writer.is_closing(), r.conn.closed

    error, writer_closed, closed = asyncio.run(main())
    assert isinstance(error, ConnectionClosed)
    assert str(error) == "shutting down"
    assert writer_closed
    assert closed


def test_notify_after_close_raises_connection_closed() -> None:
    """Using a connection after it ended raises ConnectionClosed with the reason."""

    async def main() -> None:
        r = raw()
        assert not r.conn.closed
        r.conn.close("gone")
        with pytest.raises(ConnectionClosed, match="gone"):
            r.conn.notify("m")
        with pytest.raises(ConnectionClosed, match="gone"):
            r.conn.send_request("m")
        with pytest.raises(ConnectionClosed, match="gone"):
            await r.conn.request("m")

    asyncio.run(main())


def test_request_after_peer_eof_raises_connection_closed() -> None:
    """After serve() saw the end of the stream, new requests fail at once."""

    async def main() -> None:
        r = raw()
        r.inbox.feed_eof()
        async with asyncio.timeout(5):
            await r.conn.serve()
        with pytest.raises(ConnectionClosed, match="peer closed"):
            await r.conn.request("m")

    asyncio.run(main())


def test_write_to_a_closing_stream_raises_connection_closed() -> None:
    """If the writer is already closing, notify raises ConnectionClosed instead of writing."""

    async def main() -> None:
        r = raw()
        r.writer.close()
        with pytest.raises(ConnectionClosed, match="stream to the peer is closed"):
            r.conn.notify("m")
        assert r.writer.chunks == []

    asyncio.run(main())


def test_closing_one_side_ends_the_other_sides_serve_and_its_pending_requests() -> None:
    """Closing A closes its writer; B sees EOF, returns from serve(), and B's waiting request fails."""

    async def main() -> tuple[BaseException | None, bool]:
        async with duplex() as pair:
            started = asyncio.Event()
            never = asyncio.Event()
            handler_cancelled = False

            async def hang(params: Any) -> None:
                nonlocal handler_cancelled
                started.set()
                try:
                    await never.wait()
                except asyncio.CancelledError:
                    handler_cancelled = True
                    raise

            pair.a.on_request("hang", hang)
            b_request = pair.b.send_request("hang")
            async with asyncio.timeout(5):
                await started.wait()
            pair.a.close()
            async with asyncio.timeout(5):
                await pair.b_task  # B's serve() returns at the EOF A's close caused
                error = (await asyncio.gather(b_request, return_exceptions=True))[0]
                await asyncio.gather(pair.a_task, return_exceptions=True)
            return error, handler_cancelled

    error, handler_cancelled = asyncio.run(main())
    assert isinstance(error, ConnectionClosed)
    assert handler_cancelled


def test_cancelling_serve_closes_the_connection() -> None:
    """Cancelling the serve() task fails pending requests and re-raises the cancellation."""

    async def main() -> tuple[bool, BaseException | None, bool]:
        r = raw(id_generator=ids("a"), handlers={"ok": lambda p: "ok"})
        serve = asyncio.ensure_future(r.conn.serve())
        # One round trip proves serve() is running and back to waiting for input.
        r.send({"jsonrpc": "2.0", "id": 1, "method": "ok"})
        assert await r.receive() == {"jsonrpc": "2.0", "id": 1, "result": "ok"}
        future = r.conn.send_request("m")
        serve.cancel()
        async with asyncio.timeout(5):
            await asyncio.gather(serve, return_exceptions=True)
            error = (await asyncio.gather(future, return_exceptions=True))[0]
        return serve.cancelled(), error, r.conn.closed

    cancelled, error, closed = asyncio.run(main())
    assert cancelled
    assert isinstance(error, ConnectionClosed)
    assert closed


def test_waiting_for_quiet_counts_no_quiet_while_the_peer_is_busy() -> None:
    """A peer its machine runs late (busy, silent for several quiet windows) that sends a request
    and goes back to waiting just before the next look has it answered before ``wait_idle``
    says the connection is quiet."""

    async def main() -> None:
        r = raw(handlers={"ping": lambda params: "pong"})
        looks = 0

        def busy() -> bool:
            nonlocal looks
            looks += 1
            if looks < 5:
                return True
            if looks == 5:
                r.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
            return False

        async with serving(r):
            assert await r.conn.wait_idle(0.02, 5, busy=busy)
            assert looks > 5
            r.conn.close("stopped")  # as a stop does next
            assert await r.receive() == {"jsonrpc": "2.0", "id": 1, "result": "pong"}

    asyncio.run(main())


def test_waiting_for_quiet_first_reads_what_arrived_while_the_loop_was_busy() -> None:
    """A request that came in while the loop did other work (longer than the quiet window) is
    read and answered before ``wait_idle`` says the connection is quiet."""

    async def main() -> None:
        r = raw(handlers={"ping": lambda params: "pong"})
        async with serving(r):
            await asyncio.sleep(0.05)  # nothing on the wire for longer than the quiet window
            r.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})  # and no turn of the loop since
            assert await r.conn.wait_idle(0.02, 5)
            r.conn.close("stopped")  # as a stop does next
            assert await r.receive() == {"jsonrpc": "2.0", "id": 1, "result": "pong"}

    asyncio.run(main())


# -- send_request_nowait -------------------------------------------------------------------


def test_send_request_nowait_writes_the_request_and_reports_only_failures() -> None:
    """A success answer is dropped; an error answer reaches on_error as the peer's RpcError."""

    async def main() -> tuple[list[Any], list[Exception]]:
        r = raw(id_generator=ids("a", "b"))
        errors: list[Exception] = []
        async with serving(r):
            r.conn.send_request_nowait("ok", {"n": 1}, errors.append)
            r.conn.send_request_nowait("bad", None, errors.append)
            written = [await r.receive(), await r.receive()]
            r.send({"jsonrpc": "2.0", "id": "a", "result": {"fine": True}})
            r.send({"jsonrpc": "2.0", "id": "b", "error": {"code": -32000, "message": "nope", "data": 7}})
            r.send({"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "late duplicate"}})
            async with asyncio.timeout(5):
                while not errors:
                    await asyncio.sleep(0)
            await asyncio.sleep(0.01)
        return written, errors

    written, errors = asyncio.run(main())
    assert written == [
        {"jsonrpc": "2.0", "id": "a", "method": "ok", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "bad"},
    ]
    assert len(errors) == 1
    error = errors[0]
    assert isinstance(error, RpcError)
    assert (error.code, error.message, error.data) == (-32000, "nope", 7)


def test_send_request_nowait_reports_connection_closed_when_the_connection_ends() -> None:
    """An unanswered request fails with ConnectionClosed carrying the reason; later ones raise."""

    async def main() -> tuple[list[Exception], BaseException | None]:
        r = raw()
        errors: list[Exception] = []
        r.conn.send_request_nowait("m", None, errors.append)
        r.conn.close("going away")
        try:
            r.conn.send_request_nowait("m", None, errors.append)
        except ConnectionClosed as exc:
            return errors, exc
        return errors, None

    errors, raised = asyncio.run(main())
    assert [type(e) for e in errors] == [ConnectionClosed]
    assert str(errors[0]) == "going away"
    assert isinstance(raised, ConnectionClosed)


def test_a_cancel_for_an_answered_request_is_ignored_and_its_id_can_be_reused() -> None:
    """Once an async handler has answered, $/cancelRequest for its id cancels nothing;
    a later request with the same id is served and cancellable on its own."""

    async def main() -> list[Any]:
        started = asyncio.Event()
        release = asyncio.Event()

        async def handler(params: Any) -> Any:
            if params == "wait":
                started.set()
                await release.wait()
            return params

        r = raw(handlers={"m": handler})
        async with serving(r):
            r.send({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "quick"})
            first = await r.receive()
            r.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})
            r.send({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "wait"})
            async with asyncio.timeout(5):
                await started.wait()
            r.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})
            second = await r.receive()
        return [first, second]

    first, second = asyncio.run(main())
    assert first == {"jsonrpc": "2.0", "id": 1, "result": "quick"}
    assert second["id"] == 1 and second["error"]["code"] == REQUEST_CANCELLED


# -- what goes out: every request answered, nothing over the peer's limit, a bounded queue ----


def test_a_request_over_the_outbound_limit_is_refused_and_the_connection_stays_usable() -> None:
    """Nothing is written for the peer to choke on; the next request goes through."""

    async def main() -> tuple[Any, int]:
        async with duplex(a_kwargs={"max_outbound_bytes": 200}, b_kwargs={"handlers": {"echo": lambda x: x}}) as pair:
            with pytest.raises(MessageTooLarge, match="over the limit of 200 bytes per message"):
                await pair.a.request("echo", "x" * 300)
            written = len(pair.a_writer.chunks)
            return await pair.a.request("echo", "small"), written

    answer, written = asyncio.run(main())
    assert answer == "small"
    assert written == 0


def deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_a_message_nested_deeper_than_the_peer_reads_is_not_sent_and_the_connection_stays_usable() -> None:
    """The peer would answer a parse error and close: nothing is written, the caller is told,
    the next request goes through."""

    async def main() -> tuple[Any, int]:
        async with duplex(a_kwargs={"max_outbound_depth": 10}, b_kwargs={"handlers": {"echo": lambda x: x}}) as pair:
            # The request itself is a level, its params the next: a list of 8 more fits, 9 does not.
            assert await pair.a.request("echo", deep_list(9)) == deep_list(9)
            written = len(pair.a_writer.chunks)
            with pytest.raises(
                MessageTooDeep, match=r"^the message nests arrays and objects deeper than the 10 levels"
            ):
                await pair.a.request("echo", deep_list(10))
            with pytest.raises(MessageTooDeep):
                pair.a.notify("echo", {"a": deep_list(9)})
            written = len(pair.a_writer.chunks) - written
            return await pair.a.request("echo", "small"), written

    answer, written = asyncio.run(main())
    assert answer == "small"
    assert written == 0


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("x" * 300, "the result could not be sent: the message is 3"),
        (object(), "the result could not be sent: Object of type object is not JSON serializable"),
        (deep_list(20), "the result could not be sent: the message nests arrays and objects deeper than the 10"),
    ],
    ids=["too-large", "not-json", "too-deep"],
)
def test_a_result_that_cannot_be_sent_is_answered_with_an_error_saying_why(result: Any, message: str) -> None:
    """Every request gets an answer, inline or async handler alike."""

    async def handler_async(_: Any) -> Any:
        return result

    async def main() -> list[RpcError]:
        handlers = {"inline": lambda _: result, "async": handler_async}
        errors: list[RpcError] = []
        async with duplex(b_kwargs={"handlers": handlers, "max_outbound_bytes": 200, "max_outbound_depth": 10}) as pair:
            for method in handlers:
                with pytest.raises(RpcError) as caught:
                    await pair.a.request(method, timeout=5)
                errors.append(caught.value)
        return errors

    for error in asyncio.run(main()):
        assert error.code == INTERNAL_ERROR
        assert error.message.startswith(message)


class QueueTransport:
    """The part of a pipe transport a connection reads its queue from."""

    def __init__(self) -> None:
        self.queued = 0
        self.aborted = False

    def get_write_buffer_size(self) -> int:
        return self.queued

    def abort(self) -> None:
        self.aborted = True


def test_a_peer_that_stops_reading_ends_the_connection_once_the_queue_is_over_the_limit() -> None:
    """Under the limit messages go out; over it the next one raises QueueOverflow, the queue is
    dropped, pending requests fail with the reason and serve() raises it."""

    async def main() -> tuple[BaseException | None, BaseException | None, BaseException, QueueTransport]:
        inbox, outbox = new_inbox(), asyncio.StreamReader()
        writer = PipeWriter(outbox)
        transport = writer.transport = QueueTransport()  # type: ignore[attr-defined]
        conn = Connection(inbox, writer, max_queued_bytes=3 * 1024 * 1024)
        serve = asyncio.ensure_future(conn.serve())
        pending = conn.send_request("slow")
        transport.queued = 3 * 1024 * 1024
        conn.notify("still-fits")
        transport.queued += 1
        with pytest.raises(QueueOverflow) as caught:
            conn.notify("one-too-many")
        async with asyncio.timeout(5):
            serve_error = (await asyncio.gather(serve, return_exceptions=True))[0]
            pending_error = (await asyncio.gather(pending, return_exceptions=True))[0]
        return serve_error, pending_error, caught.value, transport

    serve_error, pending_error, raised, transport = asyncio.run(main())
    assert str(raised) == "stopped reading its input: 3 MiB queued (limit 3 MiB)"
    assert isinstance(serve_error, QueueOverflow) and str(serve_error) == str(raised)
    assert isinstance(pending_error, ConnectionClosed) and str(pending_error) == str(raised)
    assert transport.aborted


def test_without_a_queue_limit_nothing_is_checked() -> None:
    """The SDK's side (and the control socket) set no limit: a large queue is the transport's business."""

    async def main() -> None:
        inbox, outbox = new_inbox(), asyncio.StreamReader()
        writer = PipeWriter(outbox)
        transport = writer.transport = QueueTransport()  # type: ignore[attr-defined]
        transport.queued = 1 << 40
        conn = Connection(inbox, writer)
        conn.notify("fine")
        assert not transport.aborted and not conn.closed
        conn.close()

    asyncio.run(main())


# -- batching writes ----------------------------------------------------------------------


def test_the_first_message_of_a_turn_goes_out_at_once_and_the_rest_together_after_it() -> None:
    """With calls in flight every write is a system call that wakes the peer: the messages a
    turn of the loop writes after its first go out as one write, in order, at the turn's end."""

    async def main() -> tuple[list[bytes], list[bytes], list[dict[str, Any]]]:
        r = raw()
        r.conn.notify("first")
        at_once = list(r.writer.chunks)
        r.conn.notify("second")
        r.conn.notify("third")
        await asyncio.sleep(0)  # the end of this turn
        chunks = list(r.writer.chunks)
        r.conn.close()
        return at_once, chunks, frames_of(r.writer)

    at_once, chunks, frames = asyncio.run(main())
    assert [m["method"] for m in FrameDecoder().feed(b"".join(at_once))] == ["first"]
    assert len(chunks) == 2
    assert [m["method"] for m in frames] == ["first", "second", "third"]


def test_messages_held_for_the_end_of_the_turn_still_go_out_when_the_connection_closes() -> None:
    """A close right after a burst of writes sends the burst first, in order, then ends the stream."""

    async def main() -> tuple[list[dict[str, Any]], bool]:
        r = raw()
        for n in range(5):
            r.conn.notify(f"m{n}")
        r.conn.close()
        received = []
        while (message := await r.receive()) is not None:
            received.append(message)
        return received, r.writer.is_closing()

    received, closed = asyncio.run(main())
    assert [m["method"] for m in received] == ["m0", "m1", "m2", "m3", "m4"]
    assert closed


def test_a_lone_answer_in_a_later_turn_goes_out_at_once_again() -> None:
    """Holding applies within one turn only: the next turn's first message is written at once."""

    async def main() -> list[int]:
        r = raw()
        sizes = []
        for n in range(3):
            r.conn.notify(f"m{n}")
            sizes.append(len(r.writer.chunks))
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        r.conn.close()
        return sizes

    assert asyncio.run(main()) == [1, 2, 3]


def test_a_notice_sent_later_never_goes_first_and_rides_with_the_turns_messages_after_them() -> None:
    """A notice nothing waits on is not written by itself at once: the turn's messages go first
    and it follows them in the same write, even when it was queued before them."""

    async def main() -> tuple[list[bytes], list[bytes], list[dict[str, Any]]]:
        r = raw()
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"notice"}'))
        nothing_yet = list(r.writer.chunks)
        r.conn.notify("call")
        await asyncio.sleep(0)  # the end of this turn
        chunks = list(r.writer.chunks)
        r.conn.close()
        return nothing_yet, chunks, frames_of(r.writer)

    nothing_yet, chunks, frames = asyncio.run(main())
    assert nothing_yet == []
    assert len(chunks) == 1
    assert [m["method"] for m in frames] == ["call", "notice"]


@pytest.mark.parametrize("queue", ["send_later", "notify_later"])
def test_what_waits_for_a_message_goes_out_by_itself_within_the_notice_delay(queue: str) -> None:
    async def main() -> tuple[list[str], list[str]]:
        r = raw()
        if queue == "send_later":
            r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"alone"}'))
        else:
            r.conn.notify_later("alone")
        await asyncio.sleep(0)
        before = [m["method"] for m in frames_of(r.writer)]
        await asyncio.sleep(NOTICE_DELAY * 4)
        after = [m["method"] for m in frames_of(r.writer)]
        r.conn.close()
        return before, after

    assert asyncio.run(main()) == ([], ["alone"])


def test_progress_held_behind_a_notice_brings_the_wait_down_to_the_progress_delay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(connection_module, "NOTICE_DELAY", 3600.0)

    async def main() -> list[str]:
        r = raw()
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"notice"}'))
        await asyncio.sleep(0)
        r.conn.notify_later("progress")
        await asyncio.sleep(PROGRESS_DELAY * 3)  # its timer comes before this one's
        methods = [m["method"] for m in frames_of(r.writer)]
        r.conn.close()
        return methods

    assert asyncio.run(main()) == ["notice", "progress"]


def test_a_connections_own_progress_delay_holds_progress_until_a_message_goes_with_it_in_one_write() -> None:
    """Given a longer progress delay, progress notifications outlast the default delay unwritten
    and go, in order, ahead of the next message something waits on, in its write."""

    async def main() -> tuple[list[bytes], int, list[str]]:
        r = raw(progress_delay=3600.0)
        r.conn.notify_later("p1")
        await asyncio.sleep(0)
        r.conn.notify_later("p2")
        await asyncio.sleep(PROGRESS_DELAY * 4)
        before = list(r.writer.chunks)
        r.conn.notify("answer")
        writes = len(r.writer.chunks)
        methods = [m["method"] for m in frames_of(r.writer)]
        r.conn.close()
        return before, writes, methods

    assert asyncio.run(main()) == ([], 1, ["p1", "p2", "answer"])


def test_progress_held_after_earlier_progress_went_out_with_a_message_waits_for_its_own_delay() -> None:
    """The timer of progress that went out early, with a message, does not send the progress
    held after it before that progress's own delay: a turn's updates still go in one write."""
    delay = 0.5

    async def main() -> tuple[list[bytes], list[list[str]]]:
        r = raw(progress_delay=delay)
        r.conn.notify_later("p1")
        await asyncio.sleep(0)
        r.conn.notify("a1")  # takes p1 along; p1's timer stays set
        await asyncio.sleep(delay * 0.6)
        r.conn.notify_later("p2")
        await asyncio.sleep(delay * 0.6)  # past p1's timer, before p2's own delay
        held = r.writer.chunks[1:]
        r.conn.notify("a2")
        writes = [[m["method"] for m in FrameDecoder().feed(chunk)] for chunk in r.writer.chunks]
        r.conn.close()
        return held, writes

    assert asyncio.run(main()) == ([], [["p1", "a1"], ["p2", "a2"]])


def test_a_connection_given_another_framing_reads_and_writes_messages_in_it() -> None:
    """A decoder and a framer replace Content-Length framing both ways (here: one JSON per line)."""

    class Lines:
        skip: tuple[bytes, ...] = ()

        def __init__(self) -> None:
            self.rest = b""

        def feed(self, data: bytes) -> list[dict[str, Any]]:
            *lines, self.rest = (self.rest + data).split(b"\n")
            return [json.loads(line) for line in lines]

        def end(self) -> None:
            pass

    async def main() -> list[bytes]:
        inbox, outbox = new_inbox(), asyncio.StreamReader()
        writer = PipeWriter(outbox)
        conn = Connection(inbox, writer, decoder=Lines(), framer=lambda body: body + b"\n")
        conn.on_request("double", lambda params: params * 2)
        task = asyncio.ensure_future(conn.serve())
        inbox.feed_data(b'{"jsonrpc":"2.0","id":1,"method":"do')
        inbox.feed_data(b'uble","params":21}\n')
        async with asyncio.timeout(5):
            answer = await outbox.readline()
        inbox.feed_eof()
        await task
        return [answer, *writer.chunks]

    answer, *chunks = asyncio.run(main())
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": 1, "result": 42}
    assert chunks == [answer]


def test_a_turn_that_begins_with_a_notice_still_sends_the_held_ones_first() -> None:
    """An event's notice is queued before the event itself is sent: the notices held from
    earlier turns go ahead of that turn's message, in the same write."""

    async def main() -> tuple[int, list[str]]:
        r = raw()
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"n1"}'))
        await asyncio.sleep(0)
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"n2"}'))
        r.conn.notify("call")
        await asyncio.sleep(0)
        writes = len(r.writer.chunks)
        r.conn.close()
        return writes, [m["method"] for m in frames_of(r.writer)]

    assert asyncio.run(main()) == (1, ["n1", "call", "n2"])


def test_held_notices_and_the_turns_messages_all_go_out_in_order_at_a_close() -> None:
    async def main() -> list[str]:
        r = raw()
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"held"}'))
        await asyncio.sleep(0)
        r.conn.notify("first")
        r.conn.notify("second")
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"closing"}'))
        r.conn.close()
        await asyncio.sleep(NOTICE_DELAY * 2)  # nothing is written twice, nor after the close
        return [m["method"] for m in frames_of(r.writer)]

    assert asyncio.run(main()) == ["held", "first", "second", "closing"]


def test_notifications_that_can_wait_keep_their_order_and_go_with_the_next_urgent_message() -> None:
    """Progress notifications and notices make no write of their own: a turn of only those is
    held, and the message that must go takes them along ahead of itself, in one write."""

    async def main() -> tuple[list[bytes], int, list[str]]:
        r = raw()
        r.conn.notify_later("p1")
        r.conn.send_later(frame(b'{"jsonrpc":"2.0","method":"notice"}'))
        await asyncio.sleep(0)
        r.conn.notify_later("p2")
        await asyncio.sleep(0)
        held = list(r.writer.chunks)
        r.conn.notify_later("p3")
        r.conn.notify("done")
        writes = len(r.writer.chunks)
        r.conn.close()
        return held, writes, [m["method"] for m in frames_of(r.writer)]

    held, writes, methods = asyncio.run(main())
    assert held == []
    assert writes == 1
    assert methods == ["p1", "notice", "p2", "p3", "done"]


def test_notifications_told_to_be_skipped_are_never_dispatched_until_that_is_undone() -> None:
    async def main() -> list[str]:
        r = raw()
        heard: list[str] = []
        r.conn.on_notification("noise", lambda params: heard.append("noise"))
        r.conn.on_notification("wanted", lambda params: heard.append("wanted"))
        r.conn.skip_unread((b'{"jsonrpc":"2.0","method":"noise"',))
        async with serving(r):
            r.send({"jsonrpc": "2.0", "method": "noise"})
            r.send({"jsonrpc": "2.0", "method": "wanted"})
            await asyncio.sleep(0.05)
            r.conn.skip_unread(())
            r.send({"jsonrpc": "2.0", "method": "noise"})
            await asyncio.sleep(0.05)
        return heard

    assert asyncio.run(main()) == ["wanted", "noise"]


def test_held_messages_count_toward_the_queue_limit() -> None:
    """A burst in one turn cannot slip past max_queued_bytes by waiting to be written."""

    async def main() -> type[BaseException] | None:
        inbox, outbox = new_inbox(), asyncio.StreamReader()
        writer = PipeWriter(outbox)
        writer.transport = QueueTransport()  # type: ignore[attr-defined]
        conn = Connection(inbox, writer, max_queued_bytes=1000)
        conn.notify("first")  # written at once; the transport counts nothing queued
        try:
            for _ in range(20):
                conn.notify("x", "y" * 100)  # held: about 150 bytes each
        except QueueOverflow as exc:
            return type(exc)
        return None

    assert asyncio.run(main()) is QueueOverflow


def test_notices_sent_later_to_a_peer_that_stops_reading_end_the_connection_at_the_next_turn() -> None:
    """Only notices, and the peer reads none: the queue limit still holds, a turn late at most."""

    async def main() -> tuple[int, type[BaseException] | None]:
        inbox, outbox = new_inbox(), asyncio.StreamReader()
        writer = PipeWriter(outbox)
        transport = writer.transport = QueueTransport()  # type: ignore[attr-defined]
        conn = Connection(inbox, writer, max_queued_bytes=1000)
        notice = frame(b'{"jsonrpc":"2.0","method":"notice","params":"' + b"y" * 100 + b'"}')
        for turn in range(20):
            try:
                for _ in range(5):
                    conn.send_later(notice)
            except QueueOverflow as exc:
                return turn, type(exc)
            await asyncio.sleep(0)  # the turn ends: the notices are written, and stay queued
            transport.queued += 5 * len(notice)
        return 20, None

    turn, error = asyncio.run(main())
    assert error is QueueOverflow and turn <= 2


def test_notifications_encoded_once_go_to_each_connection_as_one_write_urgent_or_with_the_next_message() -> None:
    """What :meth:`Connection.encode_notification` made is sent by :meth:`notify_encoded` as
    :meth:`notify` sends one message: urgent at once and in one write however many frames it
    joins; not urgent, held until the next message something waits on, ahead of it."""

    async def main() -> tuple[list[int], list[str], list[str]]:
        a, b = raw(), raw()
        frames = b"".join(a.conn.encode_notification(method, {"n": 1}) for method in ("one", "two", "three"))
        a.conn.notify_encoded(frames)
        b.conn.notify_encoded(frames, urgent=False)
        writes = [len(a.writer.chunks), len(b.writer.chunks)]
        b.conn.notify("answer")
        writes.append(len(b.writer.chunks))
        methods = [[m["method"] for m in frames_of(r.writer)] for r in (a, b)]
        a.conn.close()
        b.conn.close()
        return writes, methods[0], methods[1]

    writes, first, second = asyncio.run(main())
    assert writes == [1, 0, 1]
    assert first == ["one", "two", "three"]
    assert second == ["one", "two", "three", "answer"]


def test_a_notification_too_large_for_the_connection_is_refused_when_encoded_and_connections_say_their_limits() -> None:
    async def main() -> tuple[tuple[Framer, int, int | None], type[BaseException] | None]:
        r = raw(max_outbound_bytes=64)
        error = None
        try:
            r.conn.encode_notification("big", {"text": "x" * 100})
        except MessageTooLarge as exc:
            error = type(exc)
        limits = r.conn.outbound_encoding
        r.conn.close()
        return limits, error

    limits, error = asyncio.run(main())
    assert limits == (frame, 64, None)
    assert error is MessageTooLarge
