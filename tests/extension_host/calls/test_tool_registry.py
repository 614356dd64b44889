"""The tool registry: unique names, all-or-nothing registration, built-in overrides."""

from __future__ import annotations

from typing import Any

import pytest

from extension_host.calls.tool_registry import BUILTIN_OWNER, ToolEntry, ToolRegistry
from extension_host.errors import ExtensionLoadError, ToolCollisionError
from extension_protocol.results import ToolResult


async def _never(arguments: Any, call_id: str) -> ToolResult:
    return ToolResult("unused")


def entry(name: str, owner: str, *, overrides: bool = False) -> ToolEntry:
    return ToolEntry(name, f"{name} tool", None, owner, _never, overrides_built_in_tool=overrides)


def test_a_taken_name_is_refused_naming_the_tool_and_its_owner() -> None:
    """The newcomer gets ToolCollisionError; the first owner keeps the tool."""
    registry = ToolRegistry()
    registry.register("project:a", [entry("lint", "project:a")])
    with pytest.raises(ToolCollisionError) as caught:
        registry.register("project:b", [entry("lint", "project:b")])
    assert (caught.value.tool, caught.value.owner, caught.value.extension) == ("lint", "project:a", "project:b")
    assert "project:a" in str(caught.value) and "'lint'" in str(caught.value)
    registered = registry.get("lint")
    assert registered is not None and registered.owner == "project:a"


def test_registration_is_all_or_nothing() -> None:
    """When one of three tools collides, none of the three is registered."""
    registry = ToolRegistry()
    registry.register("project:a", [entry("b", "project:a")])
    with pytest.raises(ToolCollisionError):
        registry.register("project:c", [entry("a", "project:c"), entry("b", "project:c"), entry("c", "project:c")])
    assert [e.name for e in registry.entries()] == ["b"]
    assert registry.owned_by("project:c") == []


def test_a_name_declared_twice_by_one_extension_is_refused() -> None:
    """Two tools of one extension with one name fail that extension."""
    registry = ToolRegistry()
    with pytest.raises(ExtensionLoadError, match="declared twice"):
        registry.register("project:a", [entry("x", "project:a"), entry("x", "project:a")])
    assert "x" not in registry


def test_an_invalid_tool_name_is_refused() -> None:
    """Names a model API would reject (spaces, too long, a trailing newline) fail the extension."""
    registry = ToolRegistry()
    for bad in ("has space", "", "x" * 65, "dot.ted", "abc\n"):
        with pytest.raises(ExtensionLoadError, match="invalid"):
            registry.register("project:a", [entry(bad, "project:a")])


def test_built_in_tools_collide_unless_the_extension_overrides_them() -> None:
    """overridesBuiltInTool replaces a built-in; unregistering brings the built-in back."""
    registry = ToolRegistry()
    registry.register(BUILTIN_OWNER, [entry("bash", BUILTIN_OWNER)])
    with pytest.raises(ToolCollisionError) as caught:
        registry.register("project:a", [entry("bash", "project:a")])
    assert "built-in" in str(caught.value)
    registry.register("project:a", [entry("bash", "project:a", overrides=True)])
    assert registry.get("bash") is not None and registry.get("bash").owner == "project:a"  # type: ignore[union-attr]
    assert registry.unregister("project:a") == ["bash"]
    assert registry.get("bash") is not None and registry.get("bash").owner == BUILTIN_OWNER  # type: ignore[union-attr]


def test_overriding_does_not_apply_to_another_extensions_tool() -> None:
    """overridesBuiltInTool cannot take a name from an extension."""
    registry = ToolRegistry()
    registry.register("project:a", [entry("fmt", "project:a")])
    with pytest.raises(ToolCollisionError):
        registry.register("project:b", [entry("fmt", "project:b", overrides=True)])


def test_unregister_removes_only_that_owners_tools() -> None:
    """Tools of other owners stay."""
    registry = ToolRegistry()
    registry.register("project:a", [entry("a1", "project:a"), entry("a2", "project:a")])
    registry.register("project:b", [entry("b1", "project:b")])
    assert sorted(registry.unregister("project:a")) == ["a1", "a2"]
    assert [e.name for e in registry.entries()] == ["b1"]


def test_conflicts_lists_each_taken_name_with_its_holder_and_changes_nothing() -> None:
    """What a joining extension would collide with, so the supervisor can settle it by load order."""
    registry = ToolRegistry()
    registry.register(BUILTIN_OWNER, [entry("read", BUILTIN_OWNER)])
    registry.register("project:b", [entry("t", "project:b"), entry("u", "project:b")])
    wanted = [entry("u", "project:a"), entry("own", "project:a"), entry("t", "project:a"), entry("read", "project:a")]
    assert registry.conflicts("project:a", wanted) == {"u": "project:b", "t": "project:b", "read": BUILTIN_OWNER}
    assert registry.conflicts("project:b", [entry("t", "project:b")]) == {}
    assert registry.conflicts("project:a", [entry("read", "project:a", overrides=True)]) == {}
    assert sorted(e.name for e in registry.entries()) == ["read", "t", "u"]


def test_conflicts_refuses_an_invalid_or_doubled_name_whoever_holds_what() -> None:
    registry = ToolRegistry()
    with pytest.raises(ExtensionLoadError, match="declared twice"):
        registry.conflicts("project:a", [entry("t", "project:a"), entry("t", "project:a")])
    with pytest.raises(ExtensionLoadError, match="is invalid"):
        registry.conflicts("project:a", [entry("no spaces", "project:a")])
