"""The AHP 1.0 differential test: the real ``copilot --ahp-host`` is the specification on the wire.

One client script (:mod:`ahp_client`: initialize in the 1.0 form, authenticate where the server
requires it, list and create sessions, subscribe, a turn whose scripted model calls a tool,
cancel a turn, reconnect with replay) runs against ``copilot --ahp-host --listen`` (pinned,
offline, against a scripted OpenAI-compatible model on 127.0.0.1) and against ``extensions serve
--listen`` in the same project (:mod:`ahp_sides`). Each side's messages are normalised and
compared subject by subject (:mod:`ahp_transcript`); every difference must be allowed by the
reviewed table of :mod:`ahp_differences` (each entry with its reason). Marked ``real_agent``.

- ``ahp_fakes``: the fake GitHub the CLI's AHP host checks its token against, and the sealed
  envelope its ``authenticate`` takes.
- ``ahp_client``: the script and its records.
- ``ahp_sides``: each server started, driven and stopped (every process reaped).
- ``ahp_transcript``: subjects, normalisation, comparison, the per-step dump.
- ``ahp_differences``: the table (shown in ``docs/serving-ahp.md``).
- ``test_ahp_differential``: records each side once (a module-scoped fixture) and compares; on
  failure the message names the folder holding both sides' normalised transcripts.
- ``test_ahp_tables``: the normalisation, subjects, comparison, step attribution and table,
  without node (the fast lane), and the table in ``docs/serving-ahp.md`` equal to the code's.
"""
