"""Joined and supervised: the extensions of one host while they run.

One extension's lifecycle (:mod:`.instance`: start, join, fail, detach, stop), what its join
declares (:mod:`.handshake`, with :mod:`.agent_configs` for the custom agents it may give), what
it may ask of the host (:mod:`.inbound`, and the session-scoped methods of :mod:`.session_rpc`),
which events it is sent (:mod:`.interests`), the calls in flight to it (:mod:`.pending_tools`,
:mod:`.pending_commands`) and what the session takes back when it leaves (:mod:`.withdrawal`);
what all of them share (:mod:`.context`). Above those, which instances run (:mod:`.supervisor`),
the crash-restart policy (:mod:`.restarter`, counted by :mod:`.budget`), the file watcher
(:mod:`.reload`), stopping what holds a value no longer granted (:mod:`.revocation`), and all of
it wired for one host (:mod:`.extension_runtime`).

This package knows nothing of sessions, turns or agents: the host composes it with them.
"""
