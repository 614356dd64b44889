"""Registered and dispatched: who holds which tool and command, and one call through the hooks.

Who holds which tool (:mod:`.tool_registry`) and which slash command (:mod:`.command_registry`),
one tool call from name to result through the hook pipeline (:mod:`.dispatch`), permission
requests and who answers them (:mod:`.permissions`), and which calls are still running
(:mod:`.activity`).

This package knows names, owners and calls; not processes, and not how an extension joined.
"""
