"""Found and trusted: a project's and a user's extension folders, and whether they may run.

Where things live (:mod:`.paths`, and :mod:`.private_files` for what only its user may read),
which extension folders exist and in which order (:mod:`.discovery`), whether the project may
run its extensions and which variables they were granted (:mod:`.trust`), what of the host's
environment reaches an extension (:mod:`.environment`), and new extensions from templates
(:mod:`.scaffold`).

This package reads and writes files; it starts no process and speaks no protocol.
"""
