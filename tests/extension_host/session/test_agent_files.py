"""Custom agent files, read as GitHub Copilot CLI reads them: the project's ``.github/agents/``
and ``.claude/agents/`` and the user's ``agents/`` folder, front matter and prompt; a file that
cannot be used is one line and never an exception."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from extension_host.session.agent_files import MAX_FILE_BYTES, AgentFiles, load_agent_files
from extension_host.session.custom_agents import CustomAgent


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, newline="")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def agents_dir(project: Path) -> Path:
    return project / ".github" / "agents"


def load(project: Path, home: Path, **bounds: int) -> AgentFiles:
    return load_agent_files(project, home, **bounds)


def by_name(found: AgentFiles) -> dict[str, CustomAgent]:
    return {agent.name: agent for agent in found.agents}


def test_an_agent_file_gives_its_name_description_tools_model_and_prompt(project: Path, home: Path) -> None:
    write(
        agents_dir(project),
        "reviewer.agent.md",
        '---\nname: code-reviewer\ndescription: Reviews diffs\ntools: ["view", "grep"]\nmodel: small-model\n---\n'
        "You review code.\n\nBe brief.\n",
    )
    found = load(project, home)
    assert found.problems == ()
    assert found.agents == (
        CustomAgent(
            name="code-reviewer",
            prompt="You review code.\n\nBe brief.",
            description="Reviews diffs",
            tools=("view", "grep"),
            model="small-model",
            source="project",
        ),
    )


@pytest.mark.parametrize(
    ("file", "name"),
    [
        ("plain.agent.md", "plain"),
        ("short.md", "short"),
        ("review/deep.agent.md", "review--deep"),
        ("a/b/c.md", "a--b--c"),
    ],
)
def test_an_agent_without_a_name_is_named_by_its_path_under_the_folder(
    project: Path, home: Path, file: str, name: str
) -> None:
    write(agents_dir(project), file, "---\ndescription: d\n---\nprompt\n")
    found = load(project, home)
    assert (found.problems, [a.name for a in found.agents]) == ((), [name])


@pytest.mark.parametrize(
    ("line", "tools"),
    [
        ("", None),
        ("tools: []", ()),
        ("tools: view", ("view",)),
        ("tools: view, bash", ("view", "bash")),
        ("tools: ['view', \"bash\"]  # two", ("view", "bash")),
        ("tools:\n  - view\n  - bash", ("view", "bash")),
        ('tools: ["*"]', None),
        ("tools:", None),
    ],
)
def test_the_tools_list_is_the_allowlist_unset_or_star_meaning_every_tool(
    project: Path, home: Path, line: str, tools: tuple[str, ...] | None
) -> None:
    write(agents_dir(project), "a.agent.md", f"---\ndescription: d\n{line}\n---\np\n")
    found = load(project, home)
    assert found.problems == ()
    assert found.agents[0].tools == tools


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("---\ndescription: 'quoted: with a colon'\n---\n", "quoted: with a colon"),
        ('---\ndescription: "say \\"hi\\""\n---\n', 'say "hi"'),
        ("---\ndescription: plain # a comment\n---\n", "plain"),
        ("---\ndescription: >\n  folded one\n  folded two\n---\n", "folded one folded two"),
        ("---\ndescription: |\n  line one\n  line two\n---\n", "line one\nline two"),
        ("---\ndescription: spans\n  two lines\n---\n", "spans two lines"),
        ("\ufeff---\r\ndescription: crlf and bom\r\n---\r\n", "crlf and bom"),
        ('---\ndescription: ""\n---\n', ""),
        ("---\n# a comment\nhandoffs:\n  - label: x\n    agent: y\ndescription: d\n---\n", "d"),
    ],
)
def test_front_matter_is_read_as_the_yaml_such_files_use(
    project: Path, home: Path, text: str, description: str
) -> None:
    write(agents_dir(project), "a.agent.md", text + "prompt")
    found = load(project, home)
    assert found.problems == ()
    assert [(a.description, a.prompt) for a in found.agents] == [(description, "prompt")]


@pytest.mark.parametrize("line", ["infer: false", "disable-model-invocation: true"])
def test_an_agent_the_model_may_not_start_is_not_loaded_and_still_takes_its_name(
    project: Path, home: Path, line: str
) -> None:
    write(agents_dir(project), "hidden.agent.md", f"---\ndescription: d\n{line}\n---\np\n")
    write(project / ".claude" / "agents", "hidden.md", "---\ndescription: other\n---\np\n")
    assert load(project, home) == AgentFiles()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("just a prompt\n", "no front matter"),
        ("---\ndescription: d\n", "never closed"),
        ("---\nname: [unclosed\ndescription: d\n---\n", "line 2: the list opened by '[' is never closed"),
        ("---\nname: x\n---\np\n", "'description' is missing"),
        ("---\ndescription:\n---\np\n", "'description' must be text"),
        ("---\nname: 123\ndescription: d\n---\n", "'name' must be text, found 123"),
        ("---\nname:\ndescription: d\n---\n", None),
        ("---\nname: has space\ndescription: d\n---\n", "custom agent name 'has space'"),
        ("---\ndescription: d\ndescription: e\n---\n", "line 3: key 'description' is given twice"),
        ("---\ndescription: d\ntools: [1, 2]\n---\n", "'tools' must be a list of tool names"),
        ("---\ndescription: d\ninfer: maybe\n---\n", "'infer' must be true or false"),
        ("---\ndescription: d\nnot a key\n---\n", "line 3: expected 'key: value'"),
        ("---\ndescription: 'open\n---\n", "line 2: the string opened by ' is never closed"),
        ("---\n  description: d\n---\n", "line 2: indented"),
    ],
)
def test_a_file_that_gives_no_agent_is_one_line_naming_it(
    project: Path, home: Path, text: str, problem: str | None
) -> None:
    path = write(agents_dir(project), "bad.agent.md", text)
    found = load(project, home)
    if problem is None:  # an empty name is the file's name
        assert [a.name for a in found.agents] == ["bad"]
        return
    assert found.agents == ()
    (line,) = found.problems
    assert line.startswith(f"{path}: ") and problem in line, line
    assert "\n" not in line


def test_a_file_that_is_not_utf8_or_too_large_or_not_a_file_is_one_line_each(project: Path, home: Path) -> None:
    folder = agents_dir(project)
    binary = write(folder, "binary.agent.md", b"---\ndescription: \xff\xfe\n---\n")
    large = write(folder, "large.agent.md", "---\ndescription: d\n---\n" + "x" * MAX_FILE_BYTES)
    os.mkfifo(folder / "pipe.agent.md")
    write(folder, "good.agent.md", "---\ndescription: d\n---\np\n")
    found = load(project, home)
    assert [a.name for a in found.agents] == ["good"]
    assert found.problems == (
        f"{binary}: not UTF-8 text (byte 17): save it as UTF-8",
        f"{large}: larger than 256 KiB: shorten the prompt",
        f"{folder / 'pipe.agent.md'}: not a regular file: replace it with one or remove it",
    )


def test_only_markdown_files_are_read(project: Path, home: Path) -> None:
    write(agents_dir(project), "notes.txt", "---\ndescription: d\n---\n")
    write(agents_dir(project), "a.agent.md", "---\ndescription: d\n---\n")
    assert [a.name for a in load(project, home).agents] == ["a"]


def test_the_number_of_files_read_is_bounded_in_all_folders(project: Path, home: Path) -> None:
    for n in range(3):
        write(home / "agents", f"u{n}.md", "---\ndescription: d\n---\n")
        write(agents_dir(project), f"p{n}.md", "---\ndescription: d\n---\n")
    found = load(project, home, max_files=4)
    assert [a.name for a in found.agents] == ["p0", "u0", "u1", "u2"]
    assert found.problems == (
        f"{agents_dir(project)}: more than 4 agent files in all; the rest are not read: remove some",
    )


def test_a_users_agent_wins_over_a_projects_of_the_same_name_as_in_copilot_cli(project: Path, home: Path) -> None:
    write(agents_dir(project), "same.agent.md", "---\ndescription: project's\n---\np\n")
    write(project / ".claude" / "agents", "same.md", "---\ndescription: claude's\n---\np\n")
    write(home / "agents", "same.agent.md", "---\ndescription: user's\n---\nu\n")
    write(agents_dir(project), "mine.agent.md", "---\ndescription: project only\n---\np\n")
    found = load(project, home)
    assert found.problems == ()
    assert [(a.name, a.description, a.source) for a in found.agents] == [
        ("mine", "project only", "project"),
        ("same", "user's", "user"),
    ]


def test_github_agents_win_over_claude_agents_in_a_project(project: Path, home: Path) -> None:
    write(agents_dir(project), "same.agent.md", "---\ndescription: github's\n---\np\n")
    write(project / ".claude" / "agents", "same.md", "---\ndescription: claude's\n---\np\n")
    write(project / ".claude" / "agents", "other.md", "---\ndescription: claude only\n---\np\n")
    found = load(project, home)
    assert [(a.name, a.description) for a in found.agents] == [("other", "claude only"), ("same", "github's")]
    assert found.problems == ()


def test_two_files_of_one_folder_giving_one_name_is_a_problem_and_the_first_wins(project: Path, home: Path) -> None:
    first = write(agents_dir(project), "a.agent.md", "---\nname: same\ndescription: first\n---\n")
    second = write(agents_dir(project), "b.agent.md", "---\nname: same\ndescription: second\n---\n")
    found = load(project, home)
    assert [a.description for a in found.agents] == ["first"]
    assert found.problems == (f"{second}: the agent name 'same' is also given by {first}, which wins: rename one",)


def test_missing_folders_give_nothing(project: Path, home: Path) -> None:
    assert load(project, home) == AgentFiles()
