"""The JSON-RPC 2.0 connection: request ids, pending answers, the inbound method table.

A :class:`Connection` turns a framed byte stream pair (``Content-Length`` frames, unless it is
given another framing: :class:`MessageDecoder`, :data:`Framer`) into ``request``/``notify`` going
out and handler calls coming in. It owns id correlation, the receive loop and the single place where
an exception becomes a wire error: a handler's (:func:`error_to_wire`), and the peer's broken
framing, answered with one ``PARSE_ERROR`` (id ``null``) before the connection closes. Every
request it is handed gets an answer: a result it cannot send (too large for the peer, not JSON)
is answered with an error that says why.

It also bounds what goes out: no message larger than the peer accepts is written
(:class:`~extension_protocol.framing.MessageTooLarge`, the connection stays usable), nor, when
asked, one nested deeper (:class:`~extension_protocol.framing.MessageTooDeep`), and, when asked,
no more than ``max_queued_bytes`` wait for a peer that does not read: past that the connection
ends with :class:`QueueOverflow`. And it decides when bytes go out: the first message of a turn
of the event loop at once, the rest of the turn in one write at its end, and what nothing waits
on (:meth:`Connection.notify_later`, :meth:`Connection.send_later`) with the next message that
something does, :data:`PROGRESS_DELAY` (or the connection's own) or :data:`NOTICE_DELAY` at
most. It treats methods as strings and params as plain JSON values: it knows nothing of
sessions, tools or hooks, and nothing of processes (the caller hands it a reader and a writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol

from .framing import MAX_DEPTH, MAX_MESSAGE_BYTES, FrameDecoder, FramingError, encode_body, frame
from .protocol import (
    ERROR_CODES,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_CANCEL_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
)

__all__ = [
    "NOTICE_DELAY",
    "PROGRESS_DELAY",
    "Connection",
    "ConnectionClosed",
    "Framer",
    "Handler",
    "MessageDecoder",
    "PushReader",
    "QueueOverflow",
    "RpcError",
    "Writer",
    "error_to_wire",
]

_READ_CHUNK: Final = 256 * 1024
"""Bytes asked of the stream per read (what the pipe transport reads at most anyway)."""

Handler = Callable[[Any], Any]
"""An inbound method handler: takes the params, returns the result (plain or awaitable).

A plain function runs inline in the receive loop (for cheap bookkeeping on the hot path); a
coroutine function runs as its own task so a slow handler never stalls the loop.
"""


class PushReader(Protocol):
    """A byte stream that calls back as bytes arrive, e.g. :class:`~extension_protocol.pipes.PipeReader`."""

    def deliver_to(self, on_data: Callable[[bytes], None], on_end: Callable[[Exception | None], None]) -> None: ...


class MessageDecoder(Protocol):
    """What turns the bytes read into messages, e.g. :class:`~extension_protocol.framing.FrameDecoder`
    (the default): whatever one read returned goes to :meth:`feed`, which returns the messages it
    completed; :meth:`end` is told the stream ended. Either raises
    :class:`~extension_protocol.framing.FramingError` for bytes that end the connection."""

    skip: tuple[bytes, ...]
    """Messages whose encoded form begins with one of these are dropped unread."""

    def feed(self, data: bytes) -> list[dict[str, Any]]: ...
    def end(self) -> None: ...


Framer = Callable[[bytes], bytes]
"""Puts an encoded message (:func:`~extension_protocol.framing.encode_body`) on the wire: its
frame (:func:`~extension_protocol.framing.frame`, the default) or, e.g., its line."""


class Writer(Protocol):
    """The part of :class:`asyncio.StreamWriter` a connection needs."""

    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...
    def is_closing(self) -> bool: ...


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, or by ``request`` on receiving one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code: Final = code
        self.message: Final = message
        self.data: Final = data

    def __str__(self) -> str:
        name = ERROR_CODES.get(self.code)
        return f"{self.message} ({name or 'error'} {self.code})"


class ConnectionClosed(Exception):
    """The connection ended before an answer came, or was used after it ended.

    ``error`` is what the peer said about the connection as a whole before it closed (an error
    answer with id ``null``, such as a parse error or a refusal to serve), if it said anything.
    """

    def __init__(self, reason: str, error: RpcError | None = None) -> None:
        super().__init__(reason)
        self.error: Final = error


class QueueOverflow(ConnectionClosed):
    """The peer stopped reading: more than ``max_queued_bytes`` were waiting for it.

    Raised by :meth:`Connection.serve` (and to the writer whose message found the queue full);
    what was queued is dropped, every pending request fails with this reason.
    """


_MIB: Final = 1024 * 1024

NOTICE_DELAY: Final = 0.005
"""Seconds a notice (:meth:`Connection.send_later`) waits at most for a message to go with."""
_LISTEN: Final = 0.001
"""Seconds :meth:`Connection.wait_idle` waits at least, so that the loop reads what arrived
while it was busy before the connection is called quiet."""
_TIMER_SLACK: Final = 0.0002
"""Seconds before its deadline at which what is held may as well go (a timer is not that exact)."""
PROGRESS_DELAY: Final = 0.001
"""Seconds a progress notification (:meth:`Connection.notify_later`) waits at most: someone may
be watching it arrive (a streamed answer), so it waits far less than a notice."""


def error_to_wire(exc: BaseException) -> dict[str, Any]:
    """Map any exception from a handler to a JSON-RPC error object (the only such mapping)."""
    if isinstance(exc, RpcError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return error
    return {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}


class Connection:
    """One JSON-RPC peer over a framed stream pair.

    The reader is a stream reader, or a :class:`PushReader`, whose bytes are dispatched as
    they arrive (one task wake-up less per read).

    Call :meth:`serve` (usually as a task) to receive; it returns at a clean end of stream and
    raises :class:`~extension_protocol.framing.FramingError` when the peer breaks framing (after
    answering it with a ``PARSE_ERROR``). Either way every pending request fails with
    :class:`ConnectionClosed` carrying the reason. ``max_message_bytes`` and ``max_depth``
    bound what one inbound message may be (see :mod:`extension_protocol.framing`);
    ``max_outbound_bytes`` what one outbound message may be (by default what a peer of this
    protocol accepts, :data:`~extension_protocol.framing.MAX_MESSAGE_BYTES`) and
    ``max_outbound_depth`` how deeply (``None``: not checked; a peer of this protocol accepts
    :data:`~extension_protocol.framing.MAX_DEPTH` levels). ``max_queued_bytes``
    bounds the bytes written but not yet taken by the peer (as the writer's transport counts
    them); ``None`` leaves them unbounded. ``progress_delay`` is how long a progress
    notification (:meth:`notify_later`) waits at most for a message to go with (``None``:
    :data:`PROGRESS_DELAY`). ``decoder`` and ``framer`` replace the ``Content-Length`` framing
    both ways (see :class:`MessageDecoder` and :data:`Framer`): the given decoder applies its own
    bounds in place of ``max_message_bytes`` and ``max_depth``.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader | PushReader,
        writer: Writer,
        *,
        handlers: dict[str, Handler] | None = None,
        notification_handlers: dict[str, Handler] | None = None,
        id_generator: Iterator[int | str] | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_depth: int = MAX_DEPTH,
        max_outbound_bytes: int = MAX_MESSAGE_BYTES,
        max_outbound_depth: int | None = None,
        max_queued_bytes: int | None = None,
        progress_delay: float | None = None,
        decoder: MessageDecoder | None = None,
        framer: Framer = frame,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._handlers: dict[str, tuple[Handler, bool]] = {}
        self._notification_handlers: dict[str, tuple[Handler, bool]] = {}
        for method, handler in (handlers or {}).items():
            self.on_request(method, handler)
        for method, handler in (notification_handlers or {}).items():
            self.on_notification(method, handler)
        self._ids = id_generator if id_generator is not None else itertools.count(1)
        self._max_bytes = max_message_bytes
        self._max_depth = max_depth
        self._max_outbound = max_outbound_bytes
        self._max_outbound_depth = max_outbound_depth
        self._max_queued = max_queued_bytes
        self._progress_delay = progress_delay
        transport = getattr(writer, "transport", None)
        self._queued: Callable[[], int] | None = getattr(transport, "get_write_buffer_size", None)
        self._ended: asyncio.Future[None] | None = None
        """Settled when :meth:`serve` is to return (or raise)."""
        self._overflowed: QueueOverflow | None = None
        self._pending: dict[int | str, asyncio.Future[Any] | Callable[[Exception], None]] = {}
        """Requests awaiting an answer: the future of its result, or the error callback of
        :meth:`send_request_nowait`."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: dict[int | str, asyncio.Task[None]] = {}
        self._close_reason: str | None = None
        self._peer_error: RpcError | None = None
        """The last error the peer sent with id ``null``: why it is about to close, usually."""
        self._last_traffic = 0.0
        """When something was last read or written (monotonic): see :meth:`wait_idle`."""
        self._batch: list[bytes] | None = None
        """Frames held until the end of this turn of the loop; ``None`` when nothing was written
        in it (see :meth:`_write`)."""
        self._batch_bytes = 0
        self._later: list[bytes] = []
        """Notices of this turn of the loop (see :meth:`send_later`)."""
        self._held: list[bytes] = []
        """Notices of earlier turns, waiting for the next write (see :meth:`send_later`)."""
        self._held_timer: asyncio.TimerHandle | None = None
        self._held_until = 0.0
        """When what is held must go out (loop time): the earliest of its frames' deadlines."""
        self._deferred = False
        """Whether this turn's batch holds only messages that could wait (see :meth:`notify_later`)."""
        self._skip: tuple[bytes, ...] = ()
        self._given_decoder = decoder
        self._decoder: MessageDecoder | None = None
        self._framer = framer

    # -- registration -----------------------------------------------------------------

    def on_request(self, method: str, handler: Handler) -> None:
        """Answer requests for ``method`` with ``handler`` (replacing any earlier one)."""
        self._handlers[method] = (handler, inspect.iscoroutinefunction(handler))

    def on_notification(self, method: str, handler: Handler) -> None:
        """Pass notifications for ``method`` to ``handler`` (replacing any earlier one)."""
        self._notification_handlers[method] = (handler, inspect.iscoroutinefunction(handler))

    # -- outbound ---------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the stream ended or :meth:`close` was called."""
        return self._close_reason is not None

    def send_request(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """Write a request now and return the future of its result.

        The write happens before this returns, so requests keep the order they were made in.

        Raises:
            ConnectionClosed: the connection has ended.
            MessageTooLarge, MessageTooDeep: the request is larger, or nests deeper, than the peer
                accepts; nothing was sent.
        """
        request_id, future = self._send_request(method, params)
        # A caller may cancel the future: then nobody waits for the answer any more.
        future.add_done_callback(lambda _: self._pending.pop(request_id, None))
        return future

    def send_request_nowait(self, method: str, params: Any, on_error: Callable[[Exception], None]) -> None:
        """Write a request now, ignore its result, and pass a failure to ``on_error``.

        The failure is the peer's :class:`RpcError` or :class:`ConnectionClosed`; ``on_error``
        is called from the receive loop and must not raise. Cheaper than :meth:`send_request`
        when nobody awaits the answer: no future, nothing scheduled when it comes.

        Raises:
            ConnectionClosed: the connection has ended.
            MessageTooLarge, MessageTooDeep: the request is larger, or nests deeper, than the peer
                accepts; nothing was sent.
        """
        request_id = self._write_request(method, params)
        self._pending[request_id] = on_error

    def _write_request(self, method: str, params: Any) -> int | str:
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        return request_id

    def _send_request(self, method: str, params: Any) -> tuple[int | str, asyncio.Future[Any]]:
        request_id = self._write_request(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        return request_id, future

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send a request and return its result.

        Raises:
            RpcError: the peer answered with an error.
            ConnectionClosed: the connection ended before the answer.
            MessageTooLarge, MessageTooDeep: the request is larger, or nests deeper, than the peer
                accepts; nothing was sent.
            TimeoutError: no answer within ``timeout`` seconds; the peer is told to cancel
                (``$/cancelRequest``) and a late answer is ignored.
        """
        request_id, future = self._send_request(method, params)
        timer: asyncio.TimerHandle | None = None
        try:
            await self._writer.drain()
            if timeout is not None:
                # A timer that fails the future: cheaper than asyncio.timeout, which cancels the task.
                timer = asyncio.get_running_loop().call_later(timeout, _time_out, future)
            return await future
        except TimeoutError:
            if not self.closed:
                self.notify(METHOD_CANCEL_REQUEST, {"id": request_id})
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification; it is queued on the stream at once and never answered.

        Raises:
            ConnectionClosed: the connection has ended (or ends now: see :class:`QueueOverflow`).
            MessageTooLarge, MessageTooDeep: the notification is larger, or nests deeper, than the
                peer accepts; nothing was sent.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    def skip_unread(self, starts: tuple[bytes, ...]) -> None:
        """Drop, unread, the messages whose JSON begins with one of ``starts`` from now on
        (``()``: read everything): notifications this side has no use for, which cost it a
        parse each (see :data:`~extension_protocol.protocol.SESSION_UPDATED_START`)."""
        self._skip = starts
        if self._decoder is not None:
            self._decoder.skip = starts

    def notify_later(self, method: str, params: Any = None) -> None:
        """Send a notification nothing waits on, in order with every other message: as
        :meth:`notify`, except that it never makes a write of its own. It goes with the next
        message something waits on, or with this turn's, or after the connection's progress
        delay (:data:`PROGRESS_DELAY` unless it was given another; see :meth:`send_later`): a
        run of progress updates wakes the peer once.

        Raises:
            As :meth:`notify`.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message, urgent=False)

    def send_later(self, frame: bytes) -> None:
        """Queue an encoded notification (:func:`~extension_protocol.framing.frame`, or this
        connection's own :data:`Framer`) for a notice nothing waits on: it never delays, nor
        wakes the peer apart from, a message that something does wait on.

        It goes out after everything else this turn of the loop sends, in the same write. When
        the turn sends nothing else that must go now, it waits for the next message on this
        connection (it goes first in that write) or for :data:`NOTICE_DELAY`, whichever comes
        first: a peer is woken once for a run of notices, not once per notice. Notices keep
        their order, and no message ever goes out ahead of one queued in an earlier turn.

        The queue limit is checked once per turn, when the first frame of the turn is queued
        (several notices may follow per event): a peer that stops reading is found at the
        next turn's first, however few other messages it is sent.

        Raises:
            ConnectionClosed: the connection has ended (or ends now: see :class:`QueueOverflow`).
        """
        if self._close_reason is not None:
            raise ConnectionClosed(self._close_reason, self._peer_error)
        if self._batch is None:
            self._check_queue()
            self._batch = []
            asyncio.get_running_loop().call_soon(self._flush)
        self._later.append(frame)
        self._batch_bytes += len(frame)

    def _check_queue(self) -> None:
        if self._max_queued is not None and self._queued is not None:
            # Checked before the write, so one frame (up to the message limit) always goes
            # out: the queue holds at most the limit plus that frame.
            queued = self._queued() + self._batch_bytes
            if queued > self._max_queued:
                self._overflow(queued, self._max_queued)

    @property
    def outbound_encoding(self) -> tuple[Framer, int, int | None]:
        """How an outbound message is framed, and how large and how deep (``None``: unchecked)
        it may be: connections alike in these can be sent the same frames
        (:meth:`encode_notification`)."""
        return self._framer, self._max_outbound, self._max_outbound_depth

    def encode_notification(self, method: str, params: Any = None) -> bytes:
        """A notification encoded for :meth:`notify_encoded` on this connection, or any with the
        same :attr:`outbound_encoding`: what several peers are sent alike is encoded once.

        Raises:
            MessageTooLarge, MessageTooDeep: as :meth:`notify`.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self._framer(encode_body(message, self._max_outbound, self._max_outbound_depth))

    def notify_encoded(self, frames: bytes, *, urgent: bool = True) -> None:
        """Send notifications made by :meth:`encode_notification` (one frame, or several
        joined, which go in one write), as :meth:`notify` sends one, or as
        :meth:`notify_later` does when not ``urgent``.

        Raises:
            ConnectionClosed: as :meth:`notify`.
        """
        self._write(None, urgent, frames)

    def _write(self, message: dict[str, Any] | None, urgent: bool = True, frame: bytes = b"") -> None:
        """Queue ``message``, or when it is ``None`` the ``frame`` already encoded."""
        if self._close_reason is not None:
            raise ConnectionClosed(self._close_reason, self._peer_error)
        if self._writer.is_closing():
            raise ConnectionClosed("the stream to the peer is closed")
        if message is not None:
            frame = self._framer(encode_body(message, self._max_outbound, self._max_outbound_depth))
        self._check_queue()
        batch = self._batch
        if batch is None:
            # The first message of this turn of the loop goes out at once (a lone call waits
            # for nothing); the ones after it in the same turn go together at its end. Each
            # write to a pipe costs a system call and wakes the peer: with calls in flight,
            # that was a third of the CPU of either side.
            if urgent:
                if self._held:
                    frame = b"".join((*self._held, frame))
                    self._held = []
                    self._batch_bytes = 0
                self._writer.write(frame)
                self._batch = []
            else:
                self._batch = [frame]
                self._batch_bytes += len(frame)
                self._deferred = True
            asyncio.get_running_loop().call_soon(self._flush)
        elif urgent and self._deferred:
            # Only messages that could wait so far this turn: they go now, ahead of this one.
            self._write_out([*self._held, *batch, frame])
            self._held, self._batch, self._deferred = [], [], False
            self._batch_bytes = sum(map(len, self._later))
        else:
            batch.append(frame)
            self._batch_bytes += len(frame)
        self._last_traffic = time.monotonic()

    def _flush(self) -> None:
        """End this turn of the loop: write the messages it held back and its notices, in one
        write; when nothing in it had to go out now, hold them (see :meth:`send_later`)."""
        batch, later, deferred = self._batch, self._later, self._deferred
        self._batch, self._deferred = None, False
        if later:
            self._later = []
        if deferred or (not batch and later):
            progress = PROGRESS_DELAY if self._progress_delay is None else self._progress_delay
            self._hold([*(batch or ()), *later], progress if deferred else NOTICE_DELAY)
        elif batch:
            held, self._held = self._held, []  # a turn that began with a notice did not take them
            self._write_out([*held, *batch, *later] if held or later else batch)
            self._batch_bytes = 0

    def _hold(self, frames: list[bytes], delay: float) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + delay
        if not self._held or until < self._held_until:
            self._held_until = until
        self._held.extend(frames)
        timer = self._held_timer
        if timer is None or timer.when() > self._held_until:
            if timer is not None:
                timer.cancel()  # what is held now may wait less than what was held before
            self._held_timer = loop.call_at(self._held_until, self._release_held)

    def _release_held(self) -> None:
        self._held_timer = None
        if not self._held or self._batch is not None:
            return  # nothing held, or this turn's end writes them (or holds them again)
        loop = asyncio.get_running_loop()
        if loop.time() < self._held_until - _TIMER_SLACK:
            # The timer of frames that went out with a later message: these came after them,
            # and may wait until their own deadline (one write for a turn, not two).
            self._held_timer = loop.call_at(self._held_until, self._release_held)
            return
        held, self._held = self._held, []
        self._write_out(held)
        self._batch_bytes = 0

    def _write_out(self, frames: list[bytes]) -> None:
        if self._writer.is_closing():
            return  # closed meanwhile: nothing can go out any more
        try:
            self._writer.write(frames[0] if len(frames) == 1 else b"".join(frames))
        except (ConnectionError, OSError):
            pass  # the peer went away: the reading side reports it

    def _overflow(self, queued: int, limit: int) -> None:
        reason = f"stopped reading its input: {queued / _MIB:.0f} MiB queued (limit {limit / _MIB:g} MiB)"
        error = QueueOverflow(reason)
        self._overflowed = error
        self._batch, self._batch_bytes, self._later, self._held, self._deferred = None, 0, [], [], False
        transport = getattr(self._writer, "transport", None)
        if transport is not None:
            transport.abort()  # drops the queue now: waiting for the peer to take it is the problem
        self._shutdown(reason)
        if self._ended is not None and not self._ended.done():
            self._ended.set_exception(error)
            if isinstance(self._reader, asyncio.StreamReader):
                self._reader.feed_eof()  # wakes serve()'s pending read; nothing more is read
        raise error

    # -- inbound ----------------------------------------------------------------------

    async def serve(self) -> None:
        """Receive until the stream ends; dispatch each message.

        Raises:
            FramingError: the peer sent an invalid frame; it was answered with a
                ``PARSE_ERROR`` and the connection is closed.
            QueueOverflow: the peer stopped reading (see ``max_queued_bytes``).
        """
        ended = self._ended = asyncio.get_running_loop().create_future()
        decoder = self._decoder = self._given_decoder or FrameDecoder(self._max_bytes, self._max_depth)
        decoder.skip = self._skip

        def on_data(data: bytes) -> None:
            if ended.done():
                return  # after a framing error nothing more is read
            self._last_traffic = time.monotonic()
            try:
                for message in decoder.feed(data):
                    self._dispatch(message)
            except FramingError as exc:
                # Said once, with id null (which request broke is unknowable), so the peer
                # learns why; queued before the close, which sends what is queued first.
                self._answer_error(None, {"code": PARSE_ERROR, "message": str(exc)})
                self._shutdown(f"protocol error: {exc}")
                ended.set_exception(exc)

        def on_end(error: Exception | None) -> None:
            if ended.done():
                return
            if error is not None:
                self._shutdown(self._with_peer_error(f"the stream failed: {error}"))
                ended.set_result(None)
                return
            try:
                decoder.end()
            except FramingError as exc:
                # No answer: the peer that cut its frame short is gone.
                self._shutdown(f"protocol error: {exc}")
                ended.set_exception(exc)
                return
            self._shutdown(self._with_peer_error("the peer closed the connection"))
            ended.set_result(None)

        if self._overflowed is not None:
            ended.set_exception(self._overflowed)
        reader = self._reader
        try:
            if isinstance(reader, asyncio.StreamReader):
                while not ended.done():
                    try:
                        # One read takes whatever arrived, however many frames that is.
                        data = await reader.read(_READ_CHUNK)
                    except (ConnectionError, OSError) as exc:
                        on_end(exc)
                        break
                    if data:
                        on_data(data)
                    else:
                        on_end(None)
            else:
                # Each read is dispatched as it arrives, without waking a task for it.
                reader.deliver_to(on_data, on_end)
            await ended
        except asyncio.CancelledError:
            self._shutdown("the connection was closed")
            raise

    async def wait_idle(self, quiet: float, timeout: float, busy: Callable[[], bool] | None = None) -> bool:
        """Wait until no request of the peer is being handled and nothing was read or written
        for ``quiet`` seconds, nor was ``busy()`` true (the peer is still working, as far as
        its process shows), at most ``timeout`` seconds; True if it got quiet.

        For an orderly close: a request the peer sent in answer to our last message is read and
        answered before the stream is closed under it, even when a loaded machine runs the peer
        late.
        """
        deadline = time.monotonic() + timeout
        busy_at = 0.0
        # Whether the loop has had a turn to read what the peer sent since it was last seen busy
        # (or since the wait began: this loop may have been busy elsewhere meanwhile).
        listened = False
        while not self.closed:
            now = time.monotonic()
            peer_busy = busy is not None and busy()
            if peer_busy:
                busy_at = now
            quiet_left = max(self._last_traffic, busy_at) + quiet - now
            if quiet_left <= 0 and not self._running and listened:
                return True
            if now >= deadline:
                return False
            pause = quiet_left if quiet_left > 0 else quiet / 4 if listened else _LISTEN
            await asyncio.sleep(min(pause, deadline - now))
            listened = not peer_busy
        return True

    def _with_peer_error(self, reason: str) -> str:
        return reason if self._peer_error is None else f"{reason} after saying: {self._peer_error}"

    def close(self, reason: str = "the connection was closed") -> None:
        """End the connection: fail pending requests and close the outbound stream."""
        self._shutdown(reason)

    def _shutdown(self, reason: str) -> None:
        if self._close_reason is None:
            self._close_reason = reason
        pending = list(self._pending.values())
        self._pending.clear()
        for waiter in pending:
            if isinstance(waiter, asyncio.Future):
                if not waiter.done():
                    waiter.set_exception(ConnectionClosed(self._close_reason, self._peer_error))
            else:
                waiter(ConnectionClosed(self._close_reason, self._peer_error))
        for task in list(self._tasks):
            task.cancel()
        if self._held_timer is not None:
            self._held_timer.cancel()
            self._held_timer = None
        if not self._writer.is_closing():
            # What was written before the close still goes out, in order.
            frames, self._held, self._later = [*self._held, *(self._batch or ()), *self._later], [], []
            self._batch, self._batch_bytes, self._deferred = None, 0, False
            if frames:
                self._write_out(frames)
            self._writer.close()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            self._resolve(message)
            return
        request_id = message.get("id")
        is_request = "id" in message
        if not isinstance(method, str) or message.get("jsonrpc") != "2.0":
            if is_request:
                self._answer_error(request_id, {"code": INVALID_REQUEST, "message": "not a JSON-RPC 2.0 request"})
            return
        if method == METHOD_CANCEL_REQUEST and not is_request:
            self._cancel(message.get("params"))
            return
        table = self._handlers if is_request else self._notification_handlers
        entry = table.get(method)
        if entry is None:
            if is_request:
                self._answer_error(request_id, {"code": METHOD_NOT_FOUND, "message": f"method not found: {method}"})
            return
        handler, is_async = entry
        params = message.get("params")
        if is_async:
            task = asyncio.ensure_future(self._run(handler, params, request_id, is_request))
            self._tasks.add(task)
            if is_request and isinstance(request_id, (int, str)):
                self._running[request_id] = task
            return
        try:
            result = handler(params)
        except Exception as exc:
            if is_request:
                self._answer_error(request_id, error_to_wire(exc))
            return
        if is_request:
            # Whatever the handler woke up runs first; the answer is written right after.
            # An inline handler is usually the peer telling us a result we are waiting for.
            asyncio.get_running_loop().call_soon(self._answer, request_id, result)

    def _cancel(self, params: Any) -> None:
        request_id = params.get("id") if isinstance(params, dict) else None
        task = self._running.get(request_id) if isinstance(request_id, (int, str)) else None
        if task is not None:
            task.cancel()
            # Cancelled before it started, the task never runs _run's clean-up.
            task.add_done_callback(functools.partial(self._forget, request_id=request_id))

    async def _run(self, handler: Handler, params: Any, request_id: Any, is_request: bool) -> None:
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            if is_request and not self.closed:
                self._answer_error(request_id, {"code": REQUEST_CANCELLED, "message": "request cancelled"})
            raise
        except Exception as exc:
            if is_request:
                self._answer_error(request_id, error_to_wire(exc))
            return
        finally:
            # Here rather than in a done callback, which would cost a turn of the loop per call.
            task = asyncio.current_task()
            if task is not None:
                self._forget(task, request_id)
        if is_request:
            self._answer(request_id, result)

    def _forget(self, task: asyncio.Future[Any], request_id: Any = None) -> None:
        self._tasks.discard(task)
        if isinstance(request_id, (int, str)) and self._running.get(request_id) is task:
            del self._running[request_id]

    def _answer(self, request_id: Any, result: Any) -> None:
        try:
            self._try_write({"jsonrpc": "2.0", "id": request_id, "result": result})
        except (TypeError, ValueError) as exc:
            # Too large for the peer, or not JSON: the request still gets an answer, saying why.
            self._answer_error(request_id, {"code": INTERNAL_ERROR, "message": f"the result could not be sent: {exc}"})

    def _answer_error(self, request_id: Any, error: dict[str, Any]) -> None:
        try:
            self._try_write({"jsonrpc": "2.0", "id": request_id, "error": error})
        except (TypeError, ValueError) as exc:
            code = error.get("code")
            fallback = {
                "code": code if isinstance(code, int) else INTERNAL_ERROR,
                "message": f"the error could not be sent: {exc}",
            }
            with contextlib.suppress(TypeError, ValueError):
                self._try_write({"jsonrpc": "2.0", "id": request_id, "error": fallback})

    def _try_write(self, message: dict[str, Any]) -> None:
        # An answer to a peer that has gone away has nowhere to go; that is not our error.
        try:
            self._write(message)
        except (ConnectionClosed, ConnectionError, OSError):
            pass

    def _resolve(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if not isinstance(request_id, (int, str)):
            error = message.get("error")
            if request_id is None and error is not None:
                # About no request in particular: kept to tell waiting callers if the peer now
                # closes, rather than failing requests it may still answer.
                self._peer_error = _rpc_error(error)
            return  # not an answer to anything we sent
        waiter = self._pending.pop(request_id, None)
        if waiter is None:
            return  # an answer nobody waits for any more (timed out or unknown)
        error = message.get("error")
        if isinstance(waiter, asyncio.Future):
            if waiter.done():
                return
            if error is None:
                waiter.set_result(message.get("result"))
            else:
                waiter.set_exception(_rpc_error(error))
        elif error is not None:
            waiter(_rpc_error(error))


def _time_out(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


def _rpc_error(error: Any) -> RpcError:
    if isinstance(error, dict):
        code, text = error.get("code"), error.get("message")
        return RpcError(code if isinstance(code, int) else INTERNAL_ERROR, str(text), error.get("data"))
    return RpcError(INTERNAL_ERROR, f"malformed error object: {error!r}")
