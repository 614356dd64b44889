"""The current session's life in step with the extensions: begin, ``/clear``, end.

:class:`SessionLifecycle` puts the parts of one host in order at the three moments that change
the session. Start: the session's id and log (new or resumed, :mod:`.persisted`), the context
and turn numbers a resumed log holds (:mod:`.turns`), every extension joining that session
(:class:`~extension_host.runtime.extension_runtime.ExtensionRuntime`), the session-start hooks. ``/clear``: the
prompts in flight are dropped, the session-end hooks run, every extension is restarted with a
new session id between the old ones stopping and the new ones starting, the session-start hooks
run with ``new``. Stop: turns and the file watcher end, the session-end hooks run once,
extensions' waiting event-log reads return (:mod:`.reader`), the extensions stop,
``session.shutdown`` closes the log. A new session's start hooks hear ``new`` (as in the
Copilot CLI), a resumed one's ``resume``. An extension that crashes does not reach the error
hooks (nor does it in the CLI): its tool call in flight fails, which the failure hooks hear of.

It decides the order only: what each step does is the part's own.
"""

from __future__ import annotations

from ..errors import ExtensionHostError
from ..hooks.session_hooks import SessionHooks
from ..project.environment import protect_host_environment
from ..runtime.extension_runtime import ExtensionRuntime
from .persisted import PersistedSession
from .reader import SessionEventReader
from .turns import TurnRunner

__all__ = ["SessionLifecycle"]


class SessionLifecycle:
    """Starts, clears and stops one host's session; ``run_hooks`` runs the session hooks."""

    def __init__(
        self,
        session: PersistedSession,
        runtime: ExtensionRuntime,
        turns: TurnRunner,
        hooks: SessionHooks,
        reader: SessionEventReader,
        *,
        run_hooks: bool,
    ) -> None:
        self._session = session
        self._runtime = runtime
        self._turns = turns
        self._hooks = hooks
        self._reader = reader
        self._run_hooks = run_hooks
        self._started = False
        self._stopped = False

    async def start(self) -> None:
        """Begin (or resume) the session and start every extension in it.

        Raises:
            ExtensionHostError: it was started already.
        """
        if self._started:
            raise ExtensionHostError("this ExtensionHost was already started; create a new one")
        self._started = True
        protect_host_environment()
        self._session.begin()
        self._use_session()
        if self._session.resumed:
            self._turns.begin(self._session.replay())  # the context and turn numbers the log holds
        await self._runtime.start()
        if self._run_hooks:
            await self._hooks.start_session("resume" if self._session.resumed else "new", None)

    async def stop(self) -> None:
        """End the session and stop every extension; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        await self._turns.close()
        await self._runtime.stop_watching()
        if self._run_hooks and self._started and not self._hooks.ended:
            await self._hooks.end_session("complete", None, None)
        self._reader.close()  # extensions' waiting reads return now, so they stop at once
        await self._runtime.stop()
        self._session.end()

    async def clear(self) -> str:
        """End this session and start a new one with every extension restarted; the new id."""
        await self._turns.abandon("the session was cleared (new_session) before the prompt's run ended")
        if self._run_hooks and not self._hooks.ended:
            await self._hooks.end_session("complete", None, None)
        # The new id begins once the old extensions have stopped, so what they say while
        # stopping stays in the old session's log and the new ones join the new session.
        await self._runtime.restart_all(between=self._renew_session)
        self._hooks.ended = False
        if self._run_hooks:
            await self._hooks.start_session("new", None)
        return self._session.id

    def _renew_session(self) -> None:
        self._session.renew()
        self._use_session()
        self._turns.begin()

    def _use_session(self) -> None:
        """Hand the current session's id, workspace and start time to what starts from now on."""
        self._runtime.use_session(self._session.id, self._session.workspace, self._session.start_time)
