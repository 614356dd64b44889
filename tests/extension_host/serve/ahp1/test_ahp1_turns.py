"""A 1.0 chat keeps its last finished turns and a cursor to the others; ``fetchTurns`` loads them
back (``chat/turnsLoaded``): the windows it leaves, on paper (pure) and on a served session."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serve_client import AHP1_ROOT, ServeClient, ahp1_plain, connect_in_process, served

from extension_host.serve.ahp1.state import reduce_chat
from extension_host.serve.ahp1.turns import MAX_CURSOR_CHARS, cursor_of, page, turn_of
from extension_host.serve.served_session import MAX_FETCH_TURNS, MAX_SNAPSHOT_TURNS
from extension_host.serve.server import ProtocolServer
from extension_protocol.connection import RpcError
from extension_protocol.protocol import INVALID_PARAMS
from helpers import Project, run

S = "ahp-session:/0b6c2f0e-2222-4c1e-9a57-000000000002"


# -- on paper ------------------------------------------------------------------------------


def test_a_cursor_names_the_turn_it_comes_before_and_nothing_else_is_one() -> None:
    assert turn_of(cursor_of("t7")) == "t7"
    assert turn_of(cursor_of("before:x")) == "before:x"
    for garbage in ("", "t7", "before:", "BEFORE:t7", "x" * 10):
        assert turn_of(garbage) is None


def test_a_page_loads_up_to_the_limit_before_the_cursor_and_everything_up_to_the_window() -> None:
    history = [f"t{n}" for n in range(10)]
    assert page(history, history[6:], "t6", 2) == page(history, history[6:], "t6", 2)
    first = page(history, history[6:], "t6", 2)
    assert (first.start, first.stop, first.next_cursor) == (4, 6, cursor_of("t4"))
    # A client that holds more than the window (it loaded t2..t5 before the window moved on).
    behind = page(history, history[6:], "t2", 3)
    assert (behind.start, behind.stop, behind.next_cursor) == (0, 6, None)
    with pytest.raises(KeyError):
        page(history, history[6:], "t99", 2)


def _turn(turn_id: str) -> dict[str, Any]:
    return {"id": turn_id, "message": {"text": turn_id}, "responseParts": [], "state": "complete"}


def _bounded(state: dict[str, Any], keep: int) -> dict[str, Any]:
    """What the server does when a turn ends past its bound (as ``ChatView`` does)."""
    if len(state["turns"]) <= keep:
        return state
    kept = state["turns"][-keep:]
    return {**state, "turns": kept, "turnsNextCursor": cursor_of(kept[0]["id"])}


def _load(server: dict[str, Any], history: list[str], cursor: str | None, limit: int) -> dict[str, Any] | None:
    """The ``chat/turnsLoaded`` a fetchTurns with ``cursor`` makes (None: none), as the server makes it."""
    cursor = cursor if cursor is not None else server.get("turnsNextCursor")
    if cursor is None:
        return None
    found = page(history, [turn["id"] for turn in server["turns"]], str(turn_of(cursor)), limit)
    action: dict[str, Any] = {
        "type": "chat/turnsLoaded",
        "turns": [_turn(t) for t in history[found.start : found.stop]],
    }
    if found.next_cursor is not None:
        action["turnsNextCursor"] = found.next_cursor
    return action


@settings(max_examples=150, deadline=None)
@given(
    before=st.integers(0, 40),
    during=st.lists(st.integers(0, 6), max_size=6),
    keep=st.integers(1, 8),
    limit=st.integers(1, 5),
)
def test_paging_back_while_turns_end_leaves_every_window_one_run_ending_at_the_first_turn(
    before: int, during: list[int], keep: int, limit: int
) -> None:
    """Two clients subscribed at different times page back with their own cursors while turns
    end (each end drops the server's oldest past ``keep``): each client's turns, and the
    server's, stay one run of the history, the server's cursor names its oldest turn, and
    paging ends at the first turn, without a cursor."""
    history: list[str] = []
    server: dict[str, Any] = {"turns": []}

    def end_turn() -> None:
        nonlocal server
        history.append(f"t{len(history)}")
        server = _bounded(reduce_chat(server, {"type": "chat/turnStarted", "turnId": history[-1]}), keep)
        server = _bounded(reduce_chat(server, {"type": "chat/turnComplete", "turnId": history[-1]}), keep)
        for name in clients:
            clients[name] = reduce_chat(
                reduce_chat(clients[name], {"type": "chat/turnStarted", "turnId": history[-1]}),
                {"type": "chat/turnComplete", "turnId": history[-1]},
            )

    clients: dict[str, dict[str, Any]] = {}
    for _ in range(before):
        end_turn()
    clients["early"] = dict(server)
    for round_number, turns in enumerate(during):
        for _ in range(turns):
            end_turn()
        if round_number == 1:
            clients["late"] = dict(server)
        for name in list(clients):
            action = _load(server, history, clients[name].get("turnsNextCursor"), limit)
            if action is not None and clients[name].get("turnsNextCursor") is not None:
                server = reduce_chat(server, action)
                clients = {other: reduce_chat(state, action) for other, state in clients.items()}
        for state in (server, *clients.values()):
            ids = [turn["id"] for turn in state["turns"]]
            assert ids == history[len(history) - len(ids) :], "a window with a hole or out of order"
            oldest = history.index(ids[0]) if ids else len(history)
            if state is server:
                assert state.get("turnsNextCursor") == (cursor_of(history[oldest]) if oldest > 0 else None)
            elif state.get("turnsNextCursor") is None:
                assert oldest == 0, "a client without a cursor misses the first turns"
            else:  # one that held more than a page another client loaded: its cursor names a turn it holds
                assert str(turn_of(state["turnsNextCursor"])) in history[oldest:]
    for name in list(clients):
        for _ in range(len(history) + 1):
            if clients[name].get("turnsNextCursor") is None:
                break
            action = _load(server, history, clients[name]["turnsNextCursor"], limit)
            assert action is not None
            server = reduce_chat(server, action)
            clients = {other: reduce_chat(state, action) for other, state in clients.items()}
        assert [turn["id"] for turn in clients[name]["turns"]] == history
        assert "turnsNextCursor" not in clients[name]


# -- on a served session -------------------------------------------------------------------

TURNS = MAX_SNAPSHOT_TURNS + 12


def _prompts(count: int) -> list[list[dict[str, Any]]]:
    return [[{"text": f"answer {n}"}] for n in range(count)]


def _plain(turns: list[dict[str, Any]]) -> list[Any]:
    """What a turn is, whoever made it: its id, message, parts and end (not its times or usage)."""
    return [
        ahp1_plain({key: turn.get(key) for key in ("id", "message", "responseParts", "state", "error")}, "")
        for turn in turns
    ]


async def _chat_of(client: ServeClient) -> str:
    session = (await client.request("subscribe", {"channel": S}))["snapshot"]["state"]
    chat: str = session["defaultChat"]
    return chat


async def _turns_1_0(server: ProtocolServer, client: ServeClient, chat: str, count: int) -> None:
    for n in range(count):
        client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": f"t{n}", "message": {"text": f"q {n}"}})
        await client.wait_for_action("chat/turnComplete", turnId=f"t{n}")
        await server.sessions[S].host.wait_idle(30)


async def _page_back(client: ServeClient, chat: str, state: dict[str, Any], limit: int) -> dict[str, Any]:
    """Fetch every older page from ``state``'s cursor, folding each ``chat/turnsLoaded`` in."""
    for _ in range(TURNS):
        cursor = state.get("turnsNextCursor")
        if cursor is None:
            return state
        seen = len(client.on_channel(chat, "chat/turnsLoaded"))
        assert await client.request("fetchTurns", {"channel": chat, "cursor": cursor, "limit": limit}) == {}
        loaded = client.on_channel(chat, "chat/turnsLoaded")
        assert len(loaded) == seen + 1, "chat/turnsLoaded came before the answer"
        state = reduce_chat(state, loaded[-1])
    raise AssertionError("paging never ended")


@pytest.mark.subprocess
def test_a_chat_keeps_its_last_turns_and_fetch_turns_loads_the_older_ones_as_they_were_seen_live(
    project: Project,
) -> None:
    async def scenario() -> None:
        server = served(project, _prompts(TURNS + 1))
        live = await connect_in_process(server, "live")
        late = await connect_in_process(server, "late")
        try:
            await live.initialize_ahp1([AHP1_ROOT])
            await live.request("createSession", {"channel": S, "workingDirectories": [project.root.as_uri()]})
            chat = await _chat_of(live)
            watched = (await live.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            assert (await live.request("fetchTurns", {"channel": chat})) == {}  # nothing older: no action
            await _turns_1_0(server, live, chat, TURNS)
            for action in live.on_channel(chat):
                watched = reduce_chat(watched, action)
            assert [turn["id"] for turn in watched["turns"]] == [f"t{n}" for n in range(TURNS)]
            assert not live.on_channel(chat, "chat/turnsLoaded")

            await late.initialize_ahp1([AHP1_ROOT])
            snapshot = (await late.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            oldest = TURNS - MAX_SNAPSHOT_TURNS
            assert [turn["id"] for turn in snapshot["turns"]] == [f"t{n}" for n in range(oldest, TURNS)]
            assert snapshot["turnsNextCursor"] == cursor_of(f"t{oldest}")
            assert server.ahp1.chats[chat].chat_state["turns"] == snapshot["turns"]

            paged = await _page_back(late, chat, snapshot, limit=5)
            assert _plain(paged["turns"]) == _plain(watched["turns"])
            assert "turnsNextCursor" not in paged
            # Every subscriber got each page, numbered as any action; none carries an origin.
            pages = [e for e in late.envelopes if e["action"]["type"] == "chat/turnsLoaded"]
            assert [e["serverSeq"] for e in pages] == sorted({e["serverSeq"] for e in pages})
            assert all("origin" not in e and e["channel"] == chat for e in pages)
            await live.wait_for(lambda: len(live.on_channel(chat, "chat/turnsLoaded")) == len(pages))
            assert _plain(folded_live(watched, live, chat)["turns"]) == _plain(watched["turns"])

            # A fetch without a cursor, once all is loaded: nothing older, no action.
            seen = len(late.envelopes)
            assert await late.request("fetchTurns", {"channel": chat}) == {}
            assert server.ahp1.chats[chat].chat_state.get("turnsNextCursor") is None
            assert len(late.envelopes) == seen
            # The next turn's end brings the server's window back to its bound.
            await _turns_1_0_one(server, live, chat, f"t{TURNS}")
            state = server.ahp1.chats[chat].chat_state
            assert len(state["turns"]) == MAX_SNAPSHOT_TURNS
            assert state["turnsNextCursor"] == cursor_of(state["turns"][0]["id"])
        finally:
            await live.close()
            await late.close()
            await server.close()

    run(scenario())


def folded_live(watched: dict[str, Any], client: ServeClient, chat: str) -> dict[str, Any]:
    """``watched`` with the pages ``client`` received folded in (it already held every turn)."""
    state = watched
    for action in client.on_channel(chat, "chat/turnsLoaded"):
        state = reduce_chat(state, action)
    return state


async def _turns_1_0_one(server: ProtocolServer, client: ServeClient, chat: str, turn: str) -> None:
    client.dispatch_ahp1(chat, {"type": "chat/turnStarted", "turnId": turn, "message": {"text": turn}})
    await client.wait_for_action("chat/turnComplete", turnId=turn)
    await server.sessions[S].host.wait_idle(30)


@pytest.mark.subprocess
def test_fetch_turns_refuses_a_cursor_it_never_gave_and_a_limit_out_of_range_in_one_line(project: Project) -> None:
    async def scenario() -> None:
        server = served(project, _prompts(2))
        client = await connect_in_process(server, "one")
        try:
            await client.initialize_ahp1([AHP1_ROOT])
            await client.request("createSession", {"channel": S, "workingDirectories": [project.root.as_uri()]})
            chat = await _chat_of(client)
            await client.request("subscribe", {"channel": chat})
            await _turns_1_0(server, client, chat, 2)
            for cursor in ("garbage", cursor_of("no-such-turn"), "x" * MAX_CURSOR_CHARS):
                with pytest.raises(RpcError) as refused:
                    await client.request("fetchTurns", {"channel": chat, "cursor": cursor})
                message = refused.value.message
                assert refused.value.code == INVALID_PARAMS and chat in message and "turnsNextCursor" in message
                assert "\n" not in message and len(message) < 400
            for params in (
                {"cursor": "x" * (MAX_CURSOR_CHARS + 1)},
                {"cursor": ""},
                {"limit": 0},
                {"limit": MAX_FETCH_TURNS + 1},
                {"limit": 2.5},
            ):
                with pytest.raises(RpcError) as bounded:
                    await client.request("fetchTurns", {"channel": chat, **params})
                assert bounded.value.code == INVALID_PARAMS and "fetchTurns" in bounded.value.message
                assert "\n" not in bounded.value.message
            with pytest.raises(RpcError) as unknown:
                await client.request("fetchTurns", {"channel": "ahp-chat:/nothing"})
            assert "ahp-chat:/nothing" in unknown.value.message
            assert not client.on_channel(chat, "chat/turnsLoaded")
        finally:
            await client.close()
            await server.close()

    run(scenario())


@pytest.mark.subprocess
def test_a_first_1_0_client_after_many_seed_turns_gets_the_cursor_and_one_after_exactly_the_bound_none(
    project: Project,
) -> None:
    async def seen_after(count: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        server = served(project, _prompts(count))
        seed = await connect_in_process(server, "seed")
        one = await connect_in_process(server, "one")
        try:
            await seed.initialize()
            await seed.create_session(S, project.root)
            await seed.request("subscribe", {"resource": S})
            for n in range(count):
                seed.start_turn(S, f"t{n}", f"q {n}")
                await seed.wait_for_action("session/turnComplete", turnId=f"t{n}")
                await server.sessions[S].host.wait_idle(30)
            await one.initialize_ahp1([AHP1_ROOT])
            chat = await _chat_of(one)
            snapshot = (await one.request("subscribe", {"channel": chat}))["snapshot"]["state"]
            paged = await _page_back(one, chat, snapshot, limit=MAX_FETCH_TURNS)
            return snapshot, paged["turns"]
        finally:
            await seed.close()
            await one.close()
            await server.close()

    async def scenario() -> None:
        snapshot, turns = await seen_after(MAX_SNAPSHOT_TURNS + 3)
        assert len(snapshot["turns"]) == MAX_SNAPSHOT_TURNS and snapshot["turnsNextCursor"] == cursor_of("t3")
        assert [turn["id"] for turn in turns] == [f"t{n}" for n in range(MAX_SNAPSHOT_TURNS + 3)]
        assert [part["content"] for part in turns[0]["responseParts"]] == ["answer 0"]
        exactly, _turns = await seen_after(MAX_SNAPSHOT_TURNS)
        assert len(exactly["turns"]) == MAX_SNAPSHOT_TURNS and "turnsNextCursor" not in exactly

    run(scenario())
