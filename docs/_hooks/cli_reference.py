"""MkDocs hook: the CLI page's ``<!-- cli-reference -->`` becomes the reference generated from
the ``extensions`` parser (:mod:`extension_host.frontends.cli_reference`)."""

from __future__ import annotations

from typing import Any, Final

from extension_host.frontends.cli import _parser
from extension_host.frontends.cli_reference import reference

PLACEHOLDER: Final = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, reference(_parser(), level=3))
