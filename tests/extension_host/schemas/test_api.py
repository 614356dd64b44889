"""The API table: every wire method of the protocol module and of the session-rpc table is in it,
with its shapes."""

from __future__ import annotations

from extension_host.runtime.session_rpc import SESSION_RPC_METHODS
from extension_host.schemas.api import API_METHODS
from extension_host.schemas.generate import api_schema
from extension_protocol import protocol


def test_every_method_the_protocol_names_has_a_row() -> None:
    """A METHOD_* name added to the protocol module without a row here fails (so api.schema.json
    lists every method the host and the SDK speak)."""
    values = (getattr(protocol, name) for name in dir(protocol) if name.startswith("METHOD_"))
    named = {value for value in values if isinstance(value, str)}  # METHOD_NOT_FOUND is an error code
    assert named - {method.name for method in API_METHODS} == set()


def test_each_method_appears_once() -> None:
    names = [method.name for method in API_METHODS]
    assert len(names) == len(set(names))


def test_the_schema_uses_the_protocol_shapes_with_their_required_keys() -> None:
    """session.resume's params come from ResumeParams itself: sessionId required, tools optional."""
    schema = api_schema()
    resume = schema["methods"]["session.resume"]
    assert resume["kind"] == "request"
    assert resume["params"] == {"$ref": "#/$defs/ResumeParams"}
    params = schema["$defs"]["ResumeParams"]
    assert params["required"] == ["sessionId"]
    assert {"tools", "hooks", "hookTypes", "requestedEnvironmentVariables"} <= set(params["properties"])
    assert params["description"].startswith("``session.resume``")


def test_notifications_have_no_result() -> None:
    """session.event is a notification: params, no result."""
    event = api_schema()["methods"]["session.event"]
    assert event["kind"] == "notification" and "result" not in event


def test_every_method_the_session_rpc_table_answers_has_a_row() -> None:
    """A method added to the session-rpc table without its shapes fails (api.schema.json lists
    every session-scoped method the host answers, with its params and result)."""
    assert set(SESSION_RPC_METHODS) - {method.name for method in API_METHODS} == set()


def test_the_event_log_read_row_states_the_sdk_s_bounds_and_result() -> None:
    schema = api_schema()
    read = schema["methods"]["session.eventLog.read"]
    assert (read["direction"], read["kind"]) == ("extension-to-host", "request")
    request = schema["$defs"]["EventLogReadRequest"]["properties"]
    assert (request["max"]["minimum"], request["max"]["maximum"]) == (1, 1000)
    assert request["direction"]["enum"] == ["forward", "backward"]
    result = schema["$defs"]["EventsReadResult"]
    assert result["required"] == ["events", "cursor", "hasMore", "cursorStatus"]
    assert result["properties"]["cursorStatus"]["enum"] == ["ok", "expired"]
    assert schema["methods"]["session.eventLog.tail"]["result"] == {"$ref": "#/$defs/EventLogTailResult"}
