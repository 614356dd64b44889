"""The documentation builds and the README stays the front door: the site builds with MkDocs in
strict mode (no warning: every link and anchor resolves, every page is in the navigation), its
CLI page has a section for every command and sub-command the parser has, and the README is at
most :data:`README_MAX_LINES` lines whose links to files of the repository lead somewhere."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from extension_host.frontends.cli import _parser
from extension_host.frontends.cli_reference import commands
from helpers import REPO_ROOT

README_MAX_LINES: Final = 200
"""What the README may hold: what this is, how to install it, a first extension, where the docs are."""

_LINK: Final = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's ``toc``) gives a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (the docs extra)")
def test_the_site_builds_without_a_warning_and_its_cli_page_has_every_command(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    done = subprocess.run(build, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for words, _help, _parser_of in commands(_parser()):
        assert f'id="extensions-{words.replace(" ", "-")}"' in page, f"the CLI page has no section for {words}"


def test_the_readme_is_at_most_200_lines() -> None:
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move the detail to a page under docs/"


def test_every_link_of_the_readme_to_a_file_of_the_repository_leads_to_it() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    targets = [target for target in _LINK.findall(readme) if "://" not in target]
    assert any(target.startswith("docs/") for target in targets)
    for target in targets:
        path, _, anchor = target.partition("#")
        file = REPO_ROOT / path
        assert file.is_file(), f"README.md links to {path}, which is not there"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.MULTILINE)
            assert anchor in {_slug(heading) for heading in headings}, f"README.md links to {target}: no such heading"
