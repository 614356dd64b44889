"""Cancelling the running prompt: the signal, and waiting on work unless it is raised.

:class:`Cancellation` is the one switch of a :class:`~extension_host.session.turns.TurnRunner`:
:meth:`Cancellation.guard` awaits a piece of a run (the agent's answer, one tool call through
the host's pipeline) unless the switch is flipped first; then the piece is cancelled (the host
stops waiting: a call in flight to an extension is withdrawn, see
:class:`~extension_host.runtime.pending_tools.PendingCalls`), given :data:`CANCEL_GRACE` seconds to unwind, and
:class:`RunCancelled` is raised for the run to end as the SDK ends an aborted turn. It knows
asyncio, not events, tools or extensions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Final, TypeVar

__all__ = ["CANCEL_GRACE", "Cancellation", "RunCancelled"]

CANCEL_GRACE: Final = 5.0
"""Seconds a cancelled piece of work (a tool call in the host's pipeline) gets to unwind before
the run goes on without it."""

T = TypeVar("T")


class RunCancelled(Exception):
    """The running prompt was cancelled while this piece of it was awaited."""


class Cancellation:
    """A switch that cancels whatever :meth:`guard` is waiting on (see the module)."""

    def __init__(self) -> None:
        self._flag = asyncio.Event()

    @property
    def requested(self) -> bool:
        """Whether the switch is flipped."""
        return self._flag.is_set()

    def request(self) -> None:
        """Flip the switch: what :meth:`guard` awaits now is cancelled."""
        self._flag.set()

    def reset(self) -> None:
        """Unflip it, for the next run."""
        self._flag.clear()

    async def guard(self, work: Awaitable[T]) -> T:
        """The result of ``work``, unless the switch is (or gets) flipped first.

        Raises:
            RunCancelled: the switch was flipped; ``work`` was cancelled.
        """
        task = asyncio.ensure_future(work)
        if self._flag.is_set():
            await _withdraw(task)
            raise RunCancelled()
        flipped = asyncio.ensure_future(self._flag.wait())
        try:
            await asyncio.wait((task, flipped), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The run itself is being torn down (the host stops): nothing is left running.
            task.cancel()
            raise
        finally:
            flipped.cancel()
        if task.done():
            return task.result()
        await _withdraw(task)
        raise RunCancelled()


async def _withdraw(task: asyncio.Future[T]) -> None:
    """Cancel ``task`` and give it :data:`CANCEL_GRACE` seconds to unwind; whatever it ends
    with is not the run's business any more."""
    task.cancel()
    await asyncio.wait((task,), timeout=CANCEL_GRACE)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved, so asyncio does not report it as never retrieved
