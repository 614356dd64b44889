"""The resource* commands: files inside the session's working directory only, content by
reference, clear NotFound / AlreadyExists / PermissionDenied errors, and no way out (property
tests of paths built from `..`, symlinks, absolute paths and encodings)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extension_host.serve.contents import ContentStore
from extension_host.serve.errors import ALREADY_EXISTS, CONTENT_NOT_FOUND, NOT_FOUND, PERMISSION_DENIED, ServeError
from extension_host.serve.resources import MAX_READ_BYTES, Resources
from extension_protocol.protocol import INVALID_PARAMS
from helpers import run

SECRET = "the secret outside the working directory"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Resources, Path]:
    """A working directory with files, a symlink in and a symlink out, beside a secret."""
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "work-evil").mkdir()  # a sibling whose name starts like the root
    (tmp_path / "work-evil" / "secret.txt").write_text(SECRET)
    (root / "out").symlink_to(tmp_path)
    (root / "secret-link").symlink_to(tmp_path / "secret.txt")
    (root / "in").symlink_to(root / "src")
    return Resources(root, ContentStore()), root


def call(resources: Resources, method: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = run(getattr(resources, method)(params))
    return result


def error(resources: Resources, method: str, **params: Any) -> ServeError:
    with pytest.raises(ServeError) as caught:
        call(resources, method, **params)
    return caught.value


def uri(path: Path) -> str:
    return path.as_uri()


def test_reading_a_text_file_gives_utf8_and_a_binary_one_base64_with_its_content_type(
    world: tuple[Resources, Path],
) -> None:
    resources, root = world
    text = call(resources, "read", uri=uri(root / "src" / "app.py"))
    assert text == {"data": "print('hi')\n", "encoding": "utf-8", "contentType": "text/x-python"}
    image = call(resources, "read", uri=uri(root / "logo.png"))
    assert image["encoding"] == "base64" and image["contentType"] == "image/png"
    assert base64.b64decode(image["data"]) == b"\x89PNG\r\n\x1a\n\x00\xff"
    asked = call(resources, "read", uri=uri(root / "src" / "app.py"), encoding="base64")
    assert base64.b64decode(asked["data"]) == b"print('hi')\n"


def test_a_content_uri_is_read_from_the_content_store(world: tuple[Resources, Path]) -> None:
    resources, _ = world
    stored = resources.contents.put("copilot:/s-1", b"\x00\x01", "image/png")
    assert call(resources, "read", uri=stored) == {"data": "AAE=", "encoding": "base64", "contentType": "image/png"}
    text = resources.contents.put("copilot:/s-1", "long output", "text/plain")
    assert call(resources, "read", uri=text)["data"] == "long output"
    assert error(resources, "read", uri="copilot:/s-1/content/c-999").code == CONTENT_NOT_FOUND


def test_writing_creates_or_replaces_and_create_only_refuses_an_existing_file(world: tuple[Resources, Path]) -> None:
    resources, root = world
    target = root / "src" / "new.txt"
    assert call(resources, "write", uri=uri(target), data="SGVsbG8=", encoding="base64") == {}
    assert target.read_bytes() == b"Hello"
    call(resources, "write", uri=uri(target), data="héllo", encoding="utf-8", contentType="text/plain")
    assert target.read_text() == "héllo"
    refused = error(resources, "write", uri=uri(target), data="x", encoding="utf-8", createOnly=True)
    assert refused.code == ALREADY_EXISTS and "already exists and createOnly was set" in refused.message
    call(resources, "write", uri=uri(root / "fresh.txt"), data="x", encoding="utf-8", createOnly=True)
    assert (root / "fresh.txt").read_text() == "x"
    missing = error(resources, "write", uri=uri(root / "nowhere" / "x.txt"), data="x", encoding="utf-8")
    assert missing.code == NOT_FOUND and "its folder" in missing.message
    bad = error(resources, "write", uri=uri(target), data="not base64!", encoding="base64")
    assert bad.code == INVALID_PARAMS and "not valid base64" in bad.message


def test_listing_gives_the_entries_by_name_with_their_type(world: tuple[Resources, Path]) -> None:
    resources, root = world
    entries = call(resources, "list", uri=uri(root))["entries"]
    assert entries == [
        {"name": "in", "type": "directory"},
        {"name": "logo.png", "type": "file"},
        {"name": "out", "type": "directory"},
        {"name": "secret-link", "type": "file"},
        {"name": "src", "type": "directory"},
    ]
    assert error(resources, "list", uri=uri(root / "src" / "app.py")).code == INVALID_PARAMS
    assert error(resources, "list", uri=uri(root / "gone")).code == NOT_FOUND
    assert error(resources, "list", uri=uri(root / "out")).code == PERMISSION_DENIED


def test_copy_move_and_delete_within_the_working_directory(world: tuple[Resources, Path]) -> None:
    resources, root = world
    call(resources, "copy", source=uri(root / "src"), destination=uri(root / "copy"))
    assert (root / "copy" / "app.py").read_text() == "print('hi')\n"
    exists = error(resources, "copy", source=uri(root / "src"), destination=uri(root / "copy"), failIfExists=True)
    assert exists.code == ALREADY_EXISTS
    call(resources, "move", source=uri(root / "copy" / "app.py"), destination=uri(root / "moved.py"))
    assert (root / "moved.py").exists() and not (root / "copy" / "app.py").exists()
    call(resources, "copy", source=uri(root / "moved.py"), destination=uri(root / "logo.png"))  # overwrites
    assert (root / "logo.png").read_text() == "print('hi')\n"
    (root / "copy" / "keep.txt").write_text("x")
    not_empty = error(resources, "delete", uri=uri(root / "copy"))
    assert not_empty.code == INVALID_PARAMS and "pass recursive: true" in not_empty.message
    call(resources, "delete", uri=uri(root / "copy"), recursive=True)
    assert not (root / "copy").exists()
    assert error(resources, "delete", uri=uri(root / "copy")).code == NOT_FOUND
    assert error(resources, "move", source=uri(root / "gone"), destination=uri(root / "x")).code == NOT_FOUND
    assert error(resources, "delete", uri=uri(root), recursive=True).code == PERMISSION_DENIED
    assert (root / "src").is_dir()


def test_moving_a_file_onto_the_working_directory_leaves_the_project_and_its_git_folder_intact(
    world: tuple[Resources, Path],
) -> None:
    resources, root = world
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for method, target in [
        ("move", uri(root)),
        ("move", f"{uri(root)}/"),
        ("move", f"{uri(root / 'src')}/.."),
        ("copy", uri(root)),
    ]:
        refused = error(resources, method, source=uri(root / "src" / "app.py"), destination=target, recursive=True)
        assert refused.code == PERMISSION_DENIED, target
        assert f"it is the working directory {root} of a session, which is never replaced" in refused.message
        assert refused.data == {"request": {"uri": target, "write": True}}
    assert (root / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (root / "src" / "app.py").read_text() == "print('hi')\n" and (root / "logo.png").exists()


def test_no_working_directory_of_the_servers_sessions_nor_a_folder_holding_one_is_replaced_moved_or_deleted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "work"
    other = root / "packages" / "other"  # another session's working directory
    (other / ".git").mkdir(parents=True)
    (root / "file.txt").write_text("x")
    resources = Resources(root, ContentStore(), lambda: [root, other])
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("move", {"source": uri(root / "file.txt"), "destination": uri(other), "recursive": True}),
        ("copy", {"source": uri(root / "file.txt"), "destination": uri(root / "packages"), "recursive": True}),
        ("move", {"source": uri(root / "packages"), "destination": uri(root / "elsewhere")}),
        ("delete", {"uri": uri(root / "packages"), "recursive": True}),
        ("delete", {"uri": uri(other), "recursive": True}),
    ]
    for method, params in attempts:
        refused = error(resources, method, **params)
        assert refused.code == PERMISSION_DENIED, (method, params)
        assert f"the working directory {other} of a session" in refused.message
    assert (other / ".git").is_dir() and (root / "file.txt").exists()


def test_a_symlink_is_replaced_or_deleted_itself_never_what_it_leads_to(world: tuple[Resources, Path]) -> None:
    resources, root = world
    call(resources, "copy", source=uri(root / "logo.png"), destination=uri(root / "in"))
    assert not (root / "in").is_symlink() and (root / "in").read_bytes() == (root / "logo.png").read_bytes()
    assert (root / "src" / "app.py").exists()
    (root / "again").symlink_to(root / "src")
    call(resources, "delete", uri=uri(root / "again"), recursive=True)
    assert not os.path.lexists(root / "again") and (root / "src" / "app.py").exists()
    (root / "app-link").symlink_to(root / "src" / "app.py")
    call(resources, "move", source=uri(root / "app-link"), destination=uri(root / "moved-link"))
    assert (root / "moved-link").is_symlink() and (root / "src" / "app.py").exists()


def test_anything_outside_is_permission_denied_with_the_request_that_would_be_needed(
    world: tuple[Resources, Path], tmp_path: Path
) -> None:
    resources, root = world
    for outside in [
        uri(tmp_path / "secret.txt"),
        uri(root / "secret-link"),
        uri(root / "out" / "secret.txt"),
        f"{uri(root)}/../secret.txt",
        uri(tmp_path / "work-evil" / "secret.txt"),
        "https://example.com/secret.txt",
        "file://elsewhere/etc/passwd",
    ]:
        denied = error(resources, "read", uri=outside)
        assert denied.code == PERMISSION_DENIED, outside
        assert denied.data == {"request": {"uri": outside, "read": True}}
        assert "permission denied" in denied.message
    written = error(resources, "write", uri=uri(tmp_path / "x.txt"), data="x", encoding="utf-8")
    assert written.data == {"request": {"uri": uri(tmp_path / "x.txt"), "write": True}}
    assert not (tmp_path / "x.txt").exists()
    moved = error(resources, "move", source=uri(root / "src" / "app.py"), destination=uri(tmp_path / "stolen.py"))
    assert moved.code == PERMISSION_DENIED and (root / "src" / "app.py").exists()


def test_resource_request_grants_inside_and_denies_outside(world: tuple[Resources, Path], tmp_path: Path) -> None:
    resources, root = world
    assert call(resources, "request", uri=uri(root / "src" / "app.py"), read=True) == {}
    assert call(resources, "request", uri=uri(root / "not-yet.txt"), write=True) == {}
    denied = error(resources, "request", uri=uri(tmp_path / "secret.txt"), write=True)
    assert denied.code == PERMISSION_DENIED
    assert denied.data == {"request": {"uri": uri(tmp_path / "secret.txt"), "write": True}}


def test_missing_files_and_bad_params_say_so(world: tuple[Resources, Path]) -> None:
    resources, root = world
    missing = error(resources, "read", uri=uri(root / "nope.txt"))
    assert missing.code == NOT_FOUND and missing.message == f"{uri(root / 'nope.txt')}: no such file or folder"
    assert error(resources, "read", uri=3).code == INVALID_PARAMS
    assert error(resources, "read").message == "resourceRead: uri: Field required"
    assert error(resources, "write", uri=uri(root / "a"), data="x", encoding="latin-1").code == INVALID_PARAMS
    assert error(resources, "read", uri="file:relative/path").code == INVALID_PARAMS


def test_a_file_larger_than_a_read_may_return_is_refused_naming_the_limit(world: tuple[Resources, Path]) -> None:
    resources, root = world
    big = root / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(MAX_READ_BYTES + 1)
    refused = error(resources, "read", uri=uri(big))
    assert refused.code == INVALID_PARAMS and f"more than the {MAX_READ_BYTES}" in refused.message


SEGMENTS = st.sampled_from(["..", ".", "src", "in", "out", "secret-link", "secret.txt", "work", "work-evil", ""])


def inside(root: Path, path: str) -> bool:
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    segments=st.lists(SEGMENTS, max_size=8),
    absolute=st.booleans(),
    encode=st.sampled_from(["plain", "quoted", "dots-quoted"]),
)
def test_no_path_reads_or_writes_outside_the_working_directory(
    world: tuple[Resources, Path], tmp_path: Path, segments: list[str], absolute: bool, encode: str
) -> None:
    resources, root = world
    plain = "/".join([str(tmp_path if absolute else root), *segments])
    path = {"plain": plain, "quoted": quote(plain), "dots-quoted": plain.replace("..", "%2e%2e")}[encode]
    for method, params, target in [
        ("read", {}, plain),
        ("write", {"data": "x", "encoding": "utf-8", "createOnly": True}, plain + ".new"),
    ]:
        suffix = ".new" if method == "write" else ""
        try:
            result = call(resources, method, uri=f"file://{path}{suffix}", **params)
        except ServeError as exc:
            assert exc.code in (PERMISSION_DENIED, NOT_FOUND, INVALID_PARAMS, ALREADY_EXISTS)
            assert (exc.code == PERMISSION_DENIED) == (not inside(root, target)), (path, exc.message)
        else:
            assert inside(root, target)
            assert SECRET not in result.get("data", "")
    for folder, _, names in os.walk(tmp_path):  # symlinks not followed: every real file once
        for name in names:
            if name.endswith(".new"):
                assert inside(root, os.path.join(folder, name))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_the_system_will_not_let_the_server_read_is_permission_denied(world: tuple[Resources, Path]) -> None:
    resources, root = world
    locked = root / "locked.txt"
    locked.write_text("x")
    locked.chmod(0)
    try:
        assert error(resources, "read", uri=uri(locked)).code == PERMISSION_DENIED
    finally:
        locked.chmod(0o600)


@pytest.mark.parametrize("params", [None, [], ["file:///x"], "file:///x"])
def test_params_that_are_not_an_object_are_invalid_params(world: tuple[Resources, Path], params: Any) -> None:
    resources, _ = world
    with pytest.raises(ServeError) as bad:
        run(resources.read(params))
    assert bad.value.code == INVALID_PARAMS and bad.value.message.startswith("resourceRead: ")
