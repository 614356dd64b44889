"""The slash-command registry in memory: unique names, all-or-nothing, generations, announcements."""

from __future__ import annotations

from typing import Any

import pytest

from extension_host.calls.command_registry import (
    CommandCollisionError,
    CommandEntry,
    CommandRegistry,
    CommandResult,
    declared_commands,
)


async def never(args: str, timeout: float | None) -> CommandResult:
    raise AssertionError("not run in these tests")


def entry(name: str, owner: str, holder: object = None) -> CommandEntry:
    return CommandEntry(name, f"{name} of {owner}", owner, never, holder=holder)


def test_a_name_another_extension_holds_is_refused_and_nothing_of_the_batch_is_registered() -> None:
    changes: list[list[str]] = []
    registry = CommandRegistry(lambda entries: changes.append([e.name for e in entries]))
    registry.replace("project:a", [entry("deploy", "project:a")])
    with pytest.raises(CommandCollisionError) as caught:
        registry.replace("project:b", [entry("lint", "project:b"), entry("deploy", "project:b")])
    assert str(caught.value) == (
        "command '/deploy' is already provided by extension project:a; rename the command in project:b "
        "(command names are unique across all extensions)"
    )
    assert (caught.value.command, caught.value.owner, caught.value.extension) == ("deploy", "project:a", "project:b")
    assert [e.name for e in registry.entries()] == ["deploy"]
    assert changes == [["deploy"]]


def test_a_new_generation_replaces_its_owner_s_commands_and_the_old_one_cannot_remove_them() -> None:
    changes: list[list[str]] = []
    registry = CommandRegistry(lambda entries: changes.append([e.name for e in entries]))
    old, new = object(), object()
    registry.replace("project:a", [entry("deploy", "project:a", old), entry("lint", "project:a", old)])
    registry.replace("project:a", [entry("deploy", "project:a", new)])
    assert registry.unregister("project:a", holder=old) == []
    assert registry.held_by(new) == ["deploy"]
    get = registry.get("/deploy")
    assert get is not None and get.holder is new
    assert registry.unregister("project:a", holder=new) == ["deploy"]
    assert changes == [["deploy", "lint"], ["deploy"], []]


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ([{"name": "ok", "description": None}, {"name": "also-ok_1.v2:x"}], None),
        ([{"name": "/x"}], "command name '/x' is invalid"),
        ([{"name": "a"}, {"name": "a"}], "command 'a' is declared twice"),
        ([{"name": "a", "description": "d" * 1025}], "has 1025 characters, over the limit of 1024"),
        ([{"name": f"c{i}"} for i in range(129)], "129 commands declared, over the limit of 128"),
    ],
)
def test_declarations_are_checked_by_name_syntax_uniqueness_description_size_and_count(
    declared: list[Any], message: str | None
) -> None:
    if message is None:
        assert declared_commands(declared) == [("ok", ""), ("also-ok_1.v2:x", "")]
    else:
        with pytest.raises(ValueError, match=message):
            declared_commands(declared)


def test_a_result_says_whether_it_succeeded_and_serialises_for_scripts() -> None:
    result = CommandResult("deploy", "error", "no target", "project:a", "r1")
    assert not result.ok
    assert result.to_json() == {
        "command": "deploy",
        "status": "error",
        "ok": False,
        "error": "no target",
        "owner": "project:a",
        "request_id": "r1",
    }
    assert CommandResult("deploy", "ok").ok
