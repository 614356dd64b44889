"""What the SDK and the host share, and what neither owns alone.

The wire: ``Content-Length`` frames (:mod:`.framing`), how deeply JSON may nest (:mod:`.nesting`),
reading a pipe and writing one (:mod:`.pipes`), request ids and handlers (:mod:`.connection`),
method names, message shapes and result types (:mod:`.protocol`), error codes
(:mod:`.error_codes`, re-exported by :mod:`.protocol`) and tool results as they travel
(:mod:`.results`). The tables both sides read: hook points (:mod:`.hook_points`, with their inputs
and outputs in :mod:`.hook_models`), tool and command shapes (:mod:`.tools`, :mod:`.schema`,
:mod:`.commands`), matchers (:mod:`.matchers`), errors (:mod:`.errors`). And small machinery:
background tasks (:mod:`.tasks`), threads for plain ``def`` handlers (:mod:`.workers`), names
loaded on first use (:mod:`.lazy`), the lifeline's variables (:mod:`.lifeline`).

This package imports neither ``sdk_extension`` nor ``extension_host``; importing it imports
none of its modules.
"""
