"""Slash commands as an author writes them: the Command value, @command, running a handler."""

from __future__ import annotations

import threading

import pytest

from extension_protocol.commands import (
    MAX_COMMAND_DESCRIPTION_CHARS,
    MAX_COMMAND_ERROR_CHARS,
    MAX_COMMANDS,
    run_command,
)
from helpers import run
from sdk_extension import Command, CommandContext, InvalidCommandError, command, join_session

CONTEXT = CommandContext(session_id="s", command_name="deploy", command="/deploy prod", args="prod")


@pytest.mark.parametrize("name", ["", "/deploy", "-deploy", "has space", "x" * 65, "dé"])
def test_a_command_name_that_is_not_a_slash_command_name_is_refused(name: str) -> None:
    with pytest.raises(InvalidCommandError, match="a command name is 1-64 letters") as caught:
        Command(name, "d", lambda context: None)
    assert caught.value.command == name


def test_a_description_over_the_limit_or_a_handler_that_is_not_callable_is_refused() -> None:
    with pytest.raises(InvalidCommandError, match=f"over the limit of {MAX_COMMAND_DESCRIPTION_CHARS}"):
        Command("deploy", "d" * (MAX_COMMAND_DESCRIPTION_CHARS + 1), lambda context: None)
    with pytest.raises(InvalidCommandError, match="handler is not callable"):
        Command("deploy", "d", "not a function")  # type: ignore[arg-type]


def test_the_decorator_names_the_command_after_the_function_and_describes_it_by_its_docstring() -> None:
    @command
    def run_tests(context: CommandContext) -> None:
        """Run the test suite.

        More words that are not part of the description.
        """

    @command(name="ship", description="Ship it")
    async def anything(context: CommandContext) -> None:
        pass

    assert (run_tests.name, run_tests.description) == ("run-tests", "Run the test suite.")
    assert run_tests.to_wire() == {"name": "run-tests", "description": "Run the test suite."}
    assert (anything.name, anything.description) == ("ship", "Ship it")


def test_running_a_handler_gives_none_or_its_error_and_a_sync_one_runs_off_the_loop() -> None:
    threads: list[int] = []

    def sync_ok(context: CommandContext) -> None:
        threads.append(threading.get_ident())

    async def async_fails(context: CommandContext) -> None:
        raise ValueError(f"bad args {context.args}")

    def long_error(context: CommandContext) -> None:
        raise RuntimeError("e" * (MAX_COMMAND_ERROR_CHARS * 2))

    async def scenario() -> None:
        assert await run_command(Command("a", "", sync_ok), CONTEXT) is None
        assert threads and threads[0] != threading.get_ident()
        assert await run_command(Command("b", "", async_fails), CONTEXT) == "bad args prod"
        error = await run_command(Command("c", "", long_error), CONTEXT)
        assert error is not None and len(error) == MAX_COMMAND_ERROR_CHARS and error.endswith("…")

    run(scenario())


def test_join_session_refuses_a_command_given_twice_or_too_many_before_connecting() -> None:
    wave = Command("wave", "Wave", lambda context: None)
    with pytest.raises(InvalidCommandError, match="'wave': is given twice"):
        join_session(commands=[wave, wave])
    with pytest.raises(TypeError, match="use @command"):
        join_session(commands=[lambda context: None])  # type: ignore[list-item]
    many = [Command(f"c{i}", "", lambda context: None) for i in range(MAX_COMMANDS + 1)]
    with pytest.raises(InvalidCommandError, match=f"over the limit of {MAX_COMMANDS}"):
        join_session(commands=many)
