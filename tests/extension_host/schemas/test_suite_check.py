"""The suite-wide check (the autouse fixture in tests/conftest.py) sees every event the host
makes, wherever it is made."""

from __future__ import annotations

import extension_host.runtime.pending_commands
from extension_host.events import EventLog


def test_an_event_the_log_emits_that_does_not_match_its_model_is_recorded(events_match_the_schema: list[str]) -> None:
    """A warning without its category is caught as it is emitted, naming the type and field."""
    EventLog().emit("session.warning", {"message": "no category"})
    assert events_match_the_schema == ["event session.warning: data.warningType: Field required"]
    events_match_the_schema.clear()  # made on purpose: the test must not fail for it


def test_events_made_outside_the_log_are_checked_too(events_match_the_schema: list[str]) -> None:
    """Command runs are events sent straight to an extension (command_calls.py): their maker is checked."""
    maker = vars(extension_host.runtime.pending_commands)["make_event"]  # its own reference, imported by name
    maker("command.execute", {"requestId": "r1"}, ephemeral=True)
    assert len(events_match_the_schema) == 1
    assert events_match_the_schema[0].startswith("event command.execute: data.commandName: Field required")
    events_match_the_schema.clear()


def test_valid_events_leave_nothing_to_report(events_match_the_schema: list[str]) -> None:
    EventLog().emit("session.idle", {}, ephemeral=True)
    assert events_match_the_schema == []
