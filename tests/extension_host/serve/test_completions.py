"""completions: `/` completes extension slash commands, `@` project files (git's list or a
bounded walk), with the protocol's CompletionItem ranges in UTF-16 code units."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from extension_host.calls.command_registry import CommandInfo
from extension_host.serve.completions import complete
from extension_host.serve.errors import ServeError
from extension_protocol.protocol import INVALID_PARAMS
from helpers import git, recording_program, run

COMMANDS = {
    "deploy": CommandInfo("deploy", "Deploy the app", "project:ship"),
    "debug": CommandInfo("debug", "Attach a debugger", "user:tools"),
    "lint": CommandInfo("lint", "Lint the project", "project:lint"),
}


def ask(
    root: Path, text: str, offset: int | None = None, *, trusted: bool = True, **extra: Any
) -> list[dict[str, Any]]:
    params = {
        "kind": "userMessage",
        "session": "copilot:/s",
        "text": text,
        "offset": len(text) if offset is None else offset,
    }
    items: list[dict[str, Any]] = run(complete({**params, **extra}, commands=COMMANDS, root=root, trusted=trusted))[
        "items"
    ]
    return items


def test_a_slash_at_the_start_completes_command_names_with_their_descriptions(tmp_path: Path) -> None:
    items = ask(tmp_path, "/de")
    assert [item["insertText"] for item in items] == ["/debug", "/deploy"]
    assert items[1] == {
        "insertText": "/deploy",
        "rangeStart": 0,
        "rangeEnd": 3,
        "attachment": {
            "type": "simple",
            "label": "/deploy",
            "displayKind": "command",
            "_meta": {"description": "Deploy the app", "extension": "project:ship"},
        },
    }
    assert len(ask(tmp_path, "/")) == 3
    assert ask(tmp_path, "run /de") == []  # a command starts the message


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for relative in [
        "src/app.py",
        "src/util/apple.txt",
        "docs/guide.md",
        "README.md",
        ".hidden/secret.py",
        "node_modules/lib/app.js",
        "build/app.o",
        "ignored.log",
    ]:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x")
    return root


def test_an_at_sign_completes_project_paths_best_match_first_skipping_hidden_and_skipped_folders(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    items = ask(root, "look at @app")
    assert [item["insertText"] for item in items] == ["@src/app.py", "@src/util/apple.txt"]
    assert items[0]["rangeStart"] == 8 and items[0]["rangeEnd"] == 12
    assert items[0]["attachment"] == {
        "type": "resource",
        "uri": (root / "src/app.py").as_uri(),
        "label": "app.py",
        "displayKind": "document",
    }
    assert "@docs/guide.md" in [item["insertText"] for item in ask(root, "@")]
    assert ask(root, "@secret") == []


def test_in_a_git_repository_the_files_are_gits_and_ignored_ones_are_left_out(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".gitignore").write_text("*.log\nnode_modules/\nbuild/\n")
    git("init", "-q", str(root))
    found = [item["insertText"] for item in ask(root, "@")]
    assert "@src/app.py" in found and "@README.md" in found  # untracked but not ignored
    assert "@ignored.log" not in found
    assert not any("node_modules" in path or ".hidden" in path for path in found)


def test_git_starts_no_program_the_repositorys_configuration_names(tmp_path: Path) -> None:
    root = project(tmp_path)
    marker = tmp_path / "ran"
    evil = recording_program(tmp_path / "evil", marker)
    hooks = tmp_path / "hooks"
    for hook in ("post-index-change", "post-checkout", "pre-auto-gc", "reference-transaction"):
        recording_program(hooks / hook, marker)
    git("init", "-q", str(root))
    for name, value in [
        ("core.fsmonitor", evil),
        ("core.hooksPath", hooks),
        ("core.pager", evil),
        ("core.sshCommand", evil),
        ("core.askPass", evil),
        ("credential.helper", evil),
        ("diff.external", evil),
        ("core.editor", evil),
        ("gpg.program", evil),
    ]:
        git("-C", str(root), "config", name, str(value))
    found = [item["insertText"] for item in ask(root, "@")]
    assert "@src/app.py" in found and "@ignored.log" in found  # git's list: nothing ignored here
    assert not marker.exists()


def test_a_bare_repository_inside_the_project_is_not_used(tmp_path: Path) -> None:
    root = project(tmp_path)
    git("init", "-q", str(root))
    marker = tmp_path / "ran"
    inner = root / "vendor" / "lib"
    git("init", "-q", "--bare", str(inner))
    (inner / "notes.txt").write_text("x")
    for name, value in [("core.bare", "false"), ("core.worktree", str(inner))]:
        git("-C", str(inner), "config", name, value)
    git("-C", str(inner), "config", "core.fsmonitor", str(recording_program(tmp_path / "evil", marker)))
    found = [item["insertText"] for item in ask(inner, "@")]
    assert "@notes.txt" in found and "@config" in found  # walked: git refused the bare repository
    assert not marker.exists()


def test_in_an_untrusted_project_the_files_are_walked_and_git_is_never_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    (root / ".gitignore").write_text("*.log\n")
    git("init", "-q", str(root))
    marker = tmp_path / "ran"
    recording_program(tmp_path / "bin" / "git", marker, "exit 128")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    found = [item["insertText"] for item in ask(root, "@", trusted=False)]
    assert "@src/app.py" in found and "@ignored.log" in found  # the walk knows no .gitignore
    assert not marker.exists()
    assert "@src/app.py" in [item["insertText"] for item in ask(root, "@", trusted=True)]  # it refused: walked
    assert marker.exists()  # the same PATH does reach this git when the project is trusted


def test_offsets_count_utf16_code_units(tmp_path: Path) -> None:
    root = project(tmp_path)
    text = "😀 é @gui"  # the emoji is two UTF-16 code units
    (item,) = ask(root, text, offset=9)
    assert (item["rangeStart"], item["rangeEnd"]) == (5, 9)
    (cut,) = ask(root, text + " and more", offset=9)  # the cursor, not the end of the text, ends the word
    assert cut["insertText"] == "@docs/guide.md"


def test_plain_words_and_other_kinds_complete_nothing(tmp_path: Path) -> None:
    assert ask(tmp_path, "hello there") == []
    assert ask(tmp_path, "/de", kind="somethingElse") == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "userMessage", "text": "/x"}, "offset"),
        ({"kind": "userMessage", "text": "/x", "offset": "2"}, "offset"),
        ({"kind": "userMessage", "text": 3, "offset": 0}, "text"),
        ({"kind": "userMessage", "text": "/x", "offset": -1}, "offset"),
    ],
)
def test_bad_params_are_invalid_params_naming_the_field(tmp_path: Path, params: dict[str, Any], field: str) -> None:
    with pytest.raises(ServeError) as bad:
        run(complete(params, commands=COMMANDS, root=tmp_path, trusted=True))
    assert bad.value.code == INVALID_PARAMS and bad.value.message.startswith(f"completions: {field}")


def test_an_offset_past_the_text_is_refused_saying_how_long_it_is(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="offset 5 is past the end of the text \\(2 UTF-16 code units\\)"):
        run(
            complete({"kind": "userMessage", "text": "😀", "offset": 5}, commands=COMMANDS, root=tmp_path, trusted=True)
        )
