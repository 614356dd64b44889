"""The differential conformance suite: the real GitHub Copilot CLI is the specification on the wire.

Each scenario (``scenarios``: one table) is a project with one extension, written in JavaScript
and in Python, a prompt and a scripted model. It runs once under the real Copilot CLI (pinned,
offline, ``copilot -p``) and once under this host (``extensions chat`` against the same kind of
fake model), with the extension's protocol traffic recorded by a tap imported first
(``tap.mjs``, ``tap.py``). The two transcripts are compared subject by subject, as shapes and
values, plus what reached the model; every difference must be allowed by the reviewed table of
``differences`` (``INTENDED``, each with its reason, listed in ``docs/other-agents.md``). Marked ``real_agent``.

- ``transcript``: tap files back into messages; subjects; normalisation.
- ``compare``: the differences between two transcripts, and between what reached the model.
- ``recording``: running a scenario on one side, bounded and reaped by the real-agent tier.
- ``differences``: the table, and the documentation's rows rendered from it.
- ``test_conformance``: records each scenario once per language and side (a module-scoped
  fixture) and compares; ``-k join-py`` runs one. On failure the message names the folder holding
  both normalised transcripts (``cli.txt``, ``host.txt``) and the model views.
- ``test_tables``: the table, the scenario table and the documentation agree (not marked: no node).

A JavaScript extension runs on the SDK each side gives it: the CLI's bundled SDK under the CLI,
the SDK this host pins (``extension_host.launch.node_sdk``) under the host; each transcript's
header says which. (``tests/real_agents/test_copilot.py`` runs an extension under this host on the
CLI's own SDK build, through ``extension_sdk_path``.)
"""
