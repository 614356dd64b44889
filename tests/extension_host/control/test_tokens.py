"""A network server's token: where it comes from, what a token file must be, and how an offered
one is checked (any header a client sends, hypothesis-generated)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extension_host.control.tokens import (
    MAX_TOKEN_CHARS,
    TOKEN_ENV,
    ServerToken,
    bearer_token,
    read_token_file,
    server_token,
    token_matches,
)
from extension_host.errors import TokenError
from extension_host.project.environment import is_sensitive
from helpers import OtherUser

TOKEN = "s3cret-Token_with.symbols~42"


def token_file(tmp_path: Path, text: str = TOKEN + "\n", mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_token_comes_from_the_file_then_the_option_then_the_environment_then_a_new_one(tmp_path: Path) -> None:
    path = token_file(tmp_path)
    environ = {TOKEN_ENV: "from-the-environment"}
    assert server_token(file=path, option="given", environ=environ) == ServerToken(TOKEN, "file", path)
    assert server_token(option="given", environ=environ) == ServerToken("given", "option")
    assert server_token(environ=environ) == ServerToken("from-the-environment", "environment")
    made, other = server_token(environ={}), server_token(environ={})
    assert made.source == "start" and len(made.value) >= 40 and made.value != other.value


def test_where_a_token_came_from_is_said_without_its_value(tmp_path: Path) -> None:
    path = token_file(tmp_path)
    assert server_token(file=path).where == f"the token in {path}"
    assert server_token(environ={TOKEN_ENV: TOKEN}).where == "$EXTENSION_HOST_TOKEN"
    assert server_token(option=TOKEN).where == "the --token given"
    assert server_token(environ={}).where == "the token made for this start"


@pytest.mark.parametrize("loose", [0o644, 0o640, 0o604, 0o660, 0o606])
def test_a_token_file_others_may_read_or_write_is_refused_naming_it_and_the_fix(tmp_path: Path, loose: int) -> None:
    path = token_file(tmp_path, mode=loose)
    with pytest.raises(TokenError) as refused:
        read_token_file(path)
    assert str(refused.value) == (
        f"the token file {path} has mode {loose:04o}, so other users may read it; run `chmod 600 {path}`"
    )
    assert refused.value.source == str(path) and TOKEN not in str(refused.value)


def test_a_token_file_of_another_user_is_refused(tmp_path: Path, another_user: OtherUser) -> None:
    path = token_file(tmp_path)
    os.chown(path, another_user.uid, another_user.gid)
    with pytest.raises(TokenError, match=rf"belongs to uid {another_user.uid}, not you .*; use a file of your own"):
        read_token_file(path)


def test_what_is_not_a_regular_file_holding_one_token_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    for path in (folder, fifo):
        with pytest.raises(TokenError, match="is not a regular file"):
            read_token_file(path)
    with pytest.raises(TokenError, match="cannot be read: No such file or directory"):
        read_token_file(tmp_path / "missing")
    for text in ("", "\n", "two words\n", "ünïcode\n", "x" * (MAX_TOKEN_CHARS + 1)):
        with pytest.raises(TokenError, match="must hold one token: 1 to 1024 printable ASCII characters"):
            read_token_file(token_file(tmp_path, text))
    with pytest.raises(TokenError, match=r"^\$EXTENSION_HOST_TOKEN must hold one token"):
        server_token(environ={TOKEN_ENV: "has a space"})


def test_the_token_variable_is_withheld_from_extensions() -> None:
    assert is_sensitive(TOKEN_ENV)


def test_only_the_exact_bearer_token_matches() -> None:
    assert token_matches(bearer_token(f"Bearer {TOKEN}"), TOKEN)
    assert token_matches(bearer_token(f"bearer {TOKEN}"), TOKEN)  # the scheme's case does not matter
    for header in (None, "", TOKEN, f"Basic {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN} x"):
        assert not token_matches(bearer_token(header), TOKEN), header


HEADERS = st.one_of(
    st.text(),
    st.builds("{}{}{}".format, st.sampled_from(["Bearer ", "bearer  ", "BEARER ", "Bearer", ""]), st.text(), st.text()),
    st.builds("{}Bearer {}{}".format, st.text(max_size=2), st.just(TOKEN), st.text(max_size=2)),
)
"""Authorization headers a client may send: anything, a bearer with anything, the token with something around it."""


@given(HEADERS)
def test_any_authorization_header_is_checked_without_raising_and_matches_only_the_token(header: str) -> None:
    offered = bearer_token(header)
    assert token_matches(offered, TOKEN) == (offered == TOKEN)
    assert token_matches(header, TOKEN) == (header == TOKEN)
