"""The session's canvases without processes: declarations checked at the boundary (and by
Hypothesis), which canvas a caller means, opening only with a client that shows canvases,
focusing a re-opened instance, actions, closing, and an owner that leaves or is replaced."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host.calls.canvas_declarations import declared_canvases
from extension_host.calls.canvases import CanvasEntry, Canvases, CanvasFailure
from extension_host.events import EventLog
from extension_protocol import canvases as wire
from extension_protocol.connection import ConnectionClosed, RpcError
from helpers import run


class Owner:
    """An extension's side of the canvas requests: records them and answers from ``answers``."""

    def __init__(self, **answers: Any) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.answers = answers

    async def __call__(self, method: str, params: dict[str, Any]) -> Any:
        self.requests.append((method, params))
        answer = self.answers.get(method)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def board(owner: str = "project:board", request: Owner | None = None, holder: object = None) -> CanvasEntry:
    return declared_canvases(
        [{"id": "board", "displayName": "Board", "description": "Cards.", "actions": [{"name": "add"}]}],
        owner,
        request,
        holder,
    )[0]


def canvases_with(*entries: CanvasEntry) -> tuple[Canvases, EventLog]:
    events = EventLog()
    canvases = Canvases(events, lambda: "s1", "/work")
    for entry in entries:
        canvases.replace(entry.owner, [entry], entry.holder)
    return canvases, events


def canvas_events(events: EventLog) -> list[tuple[str, dict[str, Any]]]:
    return [(event["type"], event["data"]) for event in events.history() if "canvas" in event["type"]]


VALID = {"id": "board", "displayName": "Board", "description": "Cards."}


@pytest.mark.parametrize(
    ("declarations", "problem"),
    [
        ([{**VALID, "actions": [{"name": "canvas.open"}]}], "canvas 'board': action names beginning with 'canvas.'"),
        ([VALID, VALID], "canvas 'board' is declared twice"),
        ([{**VALID, "actions": [{"name": "go"}, {"name": "go"}]}], "canvas 'board': action 'go' is declared twice"),
        ([{**VALID, "id": "a b"}], "canvas 'a b': id: must be letters, digits"),
        ([{**VALID, "displayName": ""}], "canvas 'board': displayName"),
        ([{**VALID, "inputSchema": {"x": "y" * wire.MAX_CANVAS_SCHEMA_BYTES}}], "the input schema has"),
        ([VALID] * (wire.MAX_CANVASES + 1), f"over the limit of {wire.MAX_CANVASES}"),
        ("board", "canvases: Input should be a valid list"),
    ],
)
def test_a_bad_declaration_is_refused_in_one_line_naming_the_canvas(declarations: Any, problem: str) -> None:
    with pytest.raises(ValueError) as refused:
        declared_canvases(declarations, "project:board")
    assert problem in str(refused.value)
    assert "\n" not in str(refused.value)


_NAMES = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.:-]{0,20}\Z")
_ACTIONS = st.lists(
    st.fixed_dictionaries({"name": _NAMES}, optional={"description": st.text(max_size=30)}),
    max_size=4,
    unique_by=lambda action: action["name"],
)
_CANVAS = st.fixed_dictionaries(
    {"id": _NAMES, "displayName": st.text(min_size=1, max_size=20), "description": st.text(max_size=30)},
    optional={"actions": _ACTIONS},
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_CANVAS, max_size=5, unique_by=lambda canvas: str(canvas["id"])))
def test_every_well_formed_declaration_is_accepted_as_declared(declarations: list[dict[str, Any]]) -> None:
    reserved = any(
        action["name"].startswith(wire.RESERVED_ACTION_PREFIX)
        for canvas in declarations
        for action in canvas.get("actions", ())
    )
    if reserved:
        with pytest.raises(ValueError, match="are reserved"):
            declared_canvases(declarations, "project:x")
        return
    entries = declared_canvases(declarations, "project:x")
    assert [entry.to_wire()["canvasId"] for entry in entries] == [canvas["id"] for canvas in declarations]
    assert [[action.name for action in entry.actions] for entry in entries] == [
        [action["name"] for action in canvas.get("actions", ())] for canvas in declarations
    ]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["id", "displayName", "description", "actions"]), _JSON), max_size=3))
def test_whatever_arrives_is_accepted_or_refused_in_one_line_and_nothing_else(declarations: Any) -> None:
    try:
        declared_canvases(declarations, "project:x")
    except ValueError as exc:
        assert "\n" not in str(exc)


def test_an_id_two_extensions_declare_needs_the_extension_named_as_in_copilot_cli() -> None:
    canvases, _ = canvases_with(board("project:one"), board("user:two"))
    with pytest.raises(CanvasFailure, match=r"provided by multiple extensions \(project:one, user:two\)"):
        canvases.find("board")
    assert canvases.find("board", "user:two").owner == "user:two"
    with pytest.raises(CanvasFailure, match=r'No canvas matches canvasId "chart"\. Declared canvases: board'):
        canvases.find("chart")


def test_without_a_client_that_shows_canvases_nothing_is_sent_to_the_extension() -> None:
    owner = Owner()
    canvases, _ = canvases_with(board(request=owner))
    with pytest.raises(CanvasFailure, match="No canvas can be shown here"):
        run(canvases.open("board", "b1"))
    assert owner.requests == []


def test_an_open_is_recorded_announced_and_a_reopen_focuses_the_same_instance() -> None:
    owner = Owner(**{wire.METHOD_CANVAS_OPEN: {"title": "Board", "url": "https://example.test/b"}})
    canvases, events = canvases_with(board(request=owner))
    canvases.attach_client()
    opened = run(canvases.open("board", "b1", {"x": 1}))
    run(canvases.open("board", "b1"))
    assert [method for method, _ in owner.requests] == [wire.METHOD_CANVAS_OPEN] * 2
    assert owner.requests[0][1] == {
        "sessionId": "s1",
        "extensionId": "project:board",
        "canvasId": "board",
        "instanceId": "b1",
        "input": {"x": 1},
        "host": {"capabilities": {"canvases": True}},
        "session": {"workingDirectory": "/work"},
    }
    assert opened.to_wire()["title"] == "Board"
    assert [instance.instance_id for instance in canvases.open_instances] == ["b1"]
    assert [kind for kind, _ in canvas_events(events)] == ["session.canvas.opened"] * 2


def test_an_instance_id_of_another_canvas_and_a_bad_url_are_refused() -> None:
    other = declared_canvases([{**VALID, "id": "chart"}], "project:board", Owner(), None)[0]
    canvases, _ = canvases_with(board(request=Owner()))
    canvases.replace("project:board", [board(request=Owner()), other], None)
    canvases.attach_client()
    run(canvases.open("board", "b1"))
    with pytest.raises(CanvasFailure, match=r'Canvas instance ID "b1" .* is already owned by a different canvas'):
        run(canvases.open("chart", "b1"))
    bad = board(request=Owner(**{wire.METHOD_CANVAS_OPEN: {"url": "javascript:alert(1)"}}))
    canvases.replace("project:board", [bad], None)
    with pytest.raises(CanvasFailure, match="disallowed scheme"):
        run(canvases.open("board", "b2"))


def test_an_action_reaches_its_owner_and_an_unknown_one_lists_the_known_ones() -> None:
    owner = Owner(**{wire.METHOD_CANVAS_ACTION: {"cards": 1}})
    canvases, _ = canvases_with(board(request=owner))
    canvases.attach_client()
    with pytest.raises(CanvasFailure, match="No canvases are currently open"):
        run(canvases.invoke("b1", "add"))
    run(canvases.open("board", "b1"))
    assert run(canvases.invoke("b1", "add", {"text": "hi"})) == {"cards": 1}
    assert owner.requests[-1][1]["actionName"] == "add"
    assert owner.requests[-1][1]["input"] == {"text": "hi"}
    with pytest.raises(CanvasFailure, match=r'Unknown action "drop" on canvas "board". Known actions: \[add\]'):
        run(canvases.invoke("b1", "drop"))


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (RpcError(-32603, "the board is full", {"code": "board_full"}), "Canvas operation failed: project:board: the"),
        (ConnectionClosed("gone"), "stopped before answering canvas.action.invoke"),
        (TimeoutError(), "did not answer canvas.action.invoke in time"),
    ],
)
def test_an_owner_that_fails_leaves_or_is_silent_fails_the_call_in_one_line(failure: Exception, said: str) -> None:
    canvases, _ = canvases_with(board(request=Owner(**{wire.METHOD_CANVAS_ACTION: failure})))
    canvases.attach_client()
    run(canvases.open("board", "b1"))
    with pytest.raises(CanvasFailure, match=said):
        run(canvases.invoke("b1", "add"))


def test_closing_tells_the_owner_and_an_owner_leaving_or_replaced_closes_its_instances() -> None:
    first, second = object(), object()
    owner = Owner()
    canvases, events = canvases_with(board(request=owner, holder=first))
    canvases.attach_client()
    run(canvases.open("board", "b1"))
    run(canvases.open("board", "b2"))
    run(canvases.close("b1"))
    assert owner.requests[-1][0] == wire.METHOD_CANVAS_CLOSE
    canvases.replace("project:board", [board(request=owner, holder=second)], second)  # a reload's new version
    assert canvases.open_instances == []
    run(canvases.open("board", "b3"))
    canvases.unregister("project:board", second)
    assert canvases.declared == [] and canvases.open_instances == []
    closed = [data["instanceId"] for kind, data in canvas_events(events) if kind == "session.canvas.closed"]
    assert closed == ["b1", "b2", "b3"]


def test_the_first_client_attached_and_the_last_detached_change_the_capability() -> None:
    canvases, events = canvases_with()
    detach_one, detach_two = canvases.attach_client(), canvases.attach_client()
    detach_one()
    detach_one()  # idempotent
    assert canvases.can_show
    detach_two()
    changes = [event["data"] for event in events.history() if event["type"] == "capabilities.changed"]
    assert changes == [{"ui": {"canvases": True}}, {"ui": {"canvases": False}}]
    assert not canvases.can_show


def test_a_slow_owner_is_not_waited_for_by_another_canvas() -> None:
    release = asyncio.Event()

    async def slow(method: str, params: dict[str, Any]) -> Any:
        await release.wait()
        return {}

    async def scenario() -> list[str]:
        slow_entry = declared_canvases([{**VALID, "id": "slow"}], "project:slow", slow, None)[0]
        canvases, _ = canvases_with(slow_entry, board(request=Owner()))
        canvases.attach_client()
        pending = asyncio.ensure_future(canvases.open("slow", "s1"))
        await canvases.open("board", "b1")
        opened = [instance.instance_id for instance in canvases.open_instances]
        release.set()
        await pending
        return opened

    assert run(scenario()) == ["b1"]
