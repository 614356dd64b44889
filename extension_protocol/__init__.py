"""The protocol core that the SDK and the host share: names and shapes of messages
(:mod:`.protocol`), ``Content-Length`` frames (:mod:`.framing`), reading a pipe and writing one
(:mod:`.pipes`), request ids and handlers (:mod:`.connection`), and tool results as they travel
(:mod:`.results`).

Nothing here knows tools, hooks or sessions beyond their shapes on the wire; the author-facing
API (``join_session``, ``@tool``, hooks) is built on it one floor up.
"""
