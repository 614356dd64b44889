"""Secrets: what of the host's environment extensions see, and how they ask for more."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import sys
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extension_host import ExtensionHost
from extension_host.control.service import ControlServer
from extension_host.project.environment import (
    SENSITIVE_PATTERNS,
    carries_credentials,
    is_sensitive,
    protect_host_environment,
    resolve_request,
    scrub,
)
from extension_host.project.trust import TrustStore
from helpers import Project, doc_section, run, running_dev

SECRETS = {
    "GITHUB_TOKEN": "ghp_secret",
    "GH_TOKEN": "gh_secret",
    "AWS_SECRET_ACCESS_KEY": "aws_secret",
    "AWS_ACCESS_KEY_ID": "aws_id",
    "OPENAI_API_KEY": "sk-secret",
    "ANTHROPIC_API_KEY": "ant-secret",
    "AZURE_CLIENT_SECRET": "azure_secret",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/gcp.json",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "NPM_CONFIG__AUTH": "npm_secret",
    "DB_PASSWORD": "hunter2",
    "SIGNING_KEY": "key",
    "GITLAB_PAT": "glpat",
    "SENTRY_DSN": "https://key@sentry.example/1",
    "DATABASE_URL": "postgres://user:pw@db/app",
    "github_token": "lowercase too",
    "MYSQL_PWD": "hunter2",
    "REDIS_PWD": "hunter2",
    "SSHPASS": "hunter2",
    "LDAP_PASSWD": "hunter2",
    "KEYCLOAK_PASSWORT": "hunter2",
    "BW_SESSION": "bitwarden-session",
    "OP_SESSION_my": "1password-session",
    "DOCKER_AUTH_CONFIG": '{"auths": {}}',
    "GCP_SA_JSON": '{"type": "service_account"}',
    "SLACK_WEBHOOK_URL": "https://hooks.slack.example/services/T0/B0/x",
    "DISCORD_WEBHOOK": "https://discord.example/api/webhooks/1/x",
    "TEST_DATABASE_URL": "postgres://localhost/test",
}
"""Variables withheld for their name alone, whatever their value."""
CREDENTIAL_URLS = {
    "REDIS_URL": "redis://user:pass@cache:6379/0",
    "REDIS_ADDRESS": "redis://:only-a-password@cache:6379",
    "UV_INDEX_URL": "https://user:pw@pypi.example/simple",
    "PIP_EXTRA_INDEX_URL": "https://pypi.org/simple https://deploy:pw@pypi.example/simple",
    "HTTPS_PROXY_WITH_LOGIN": "http://user:pass@proxy:3128",
    "ALL_PROXY": "socks5://user:pass@proxy:1080",
    "GIT_REMOTE": "https://ghp_abc123@github.com/org/repo.git",
    "CLONE_URL": "https://x-access-token:ghs_abc@github.com/org/repo",
    "REQUIREMENT": "git+https://TOKEN@github.com/org/pkg.git#egg=pkg",
    "AMQP_URL": "amqps://guest:p@ss@queue:5671/vhost",
    "JDBC_URL": "jdbc:postgresql://db:5432/app?user=app&password=secret",
    "FEED": "https://feeds.example/items?page=2&access_token=abc",
}
"""Variables withheld for their value alone: a URL with credentials in it, whatever the name."""
ORDINARY = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/home/me",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "HTTPS_PROXY": "http://proxy:3128",
    "http_proxy": "http://proxy:3128",
    "NO_PROXY": "localhost",
    "EXTENSION_HOST_HOME": "/home/me/.config/extension-host",
    "TOKENIZERS_PARALLELISM": "false",
    "KEYBOARD_LAYOUT": "us",
    "PWD": "/home/me/project",
    "OLDPWD": "/home/me",
    "SSH_ASKPASS": "/usr/bin/ssh-askpass",
    "PIP_INDEX_URL": "https://pypi.org/simple",
    "CACHE_URL": "redis://cache:6379/0",
    "UPSTREAM_REMOTE": "ssh://git@github.com/org/repo.git",
    "PGURL": "postgres://app@db/app",
    "SEARCH_URL": "https://search.example/?q=a:b@c&page=2",
    "EMAIL": "me@example.org",
}

REPORTER = """
    import json, os
    from sdk_extension import join_session, tool

    @tool(description="What this process sees of the environment")
    def report() -> str:
        with open("/proc/self/environ", "rb") as handle:
            initial = [item.split(b"=", 1)[0].decode() for item in handle.read().split(b"\\0") if item]
        return json.dumps({{"environ": dict(os.environ), "initial": initial}})

    join_session(tools=[report]{request})
"""


# -- the rule --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_names_that_look_like_credentials_are_sensitive(name: str) -> None:
    assert is_sensitive(name)


@pytest.mark.parametrize("name", sorted(CREDENTIAL_URLS))
def test_a_url_with_credentials_in_it_is_sensitive_whatever_its_name(name: str) -> None:
    assert not is_sensitive(name)
    assert carries_credentials(CREDENTIAL_URLS[name])
    assert is_sensitive(name, CREDENTIAL_URLS[name])


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_path_home_locale_proxies_and_the_hosts_own_variables_are_kept(name: str) -> None:
    assert not is_sensitive(name, ORDINARY[name])


def test_scrub_removes_exactly_the_sensitive_variables() -> None:
    assert scrub({**SECRETS, **CREDENTIAL_URLS, **ORDINARY}) == ORDINARY


def test_the_security_page_documents_every_pattern() -> None:
    """The Security page lists the patterns this module applies."""
    section = doc_section("security.md", "# Security")
    for pattern in SENSITIVE_PATTERNS:
        assert f"`{pattern}`" in section, pattern


def test_a_request_needs_a_grant_only_for_sensitive_names_that_are_set() -> None:
    """Unset names are skipped, ordinary ones given, ungranted secrets missing; order and repeats kept sane."""
    host = {"GITHUB_TOKEN": "t", "NPM_TOKEN": "n", "PATH": "/bin"}
    grant = resolve_request(
        ["GITHUB_TOKEN", "PATH", "UNSET_TOKEN", "NPM_TOKEN", "GITHUB_TOKEN"], host, {"GITHUB_TOKEN"}
    )
    assert grant.requested == ("GITHUB_TOKEN", "PATH", "UNSET_TOKEN", "NPM_TOKEN")
    assert grant.values == {"GITHUB_TOKEN": "t", "PATH": "/bin"}
    assert grant.granted == ("GITHUB_TOKEN", "PATH")
    assert grant.missing == ("NPM_TOKEN",)


# -- real extensions ---------------------------------------------------------------------------


async def _report(host: ExtensionHost) -> dict[str, Any]:
    result = await host.call_tool("report")
    assert result.success, result.text_result_for_llm
    report: dict[str, Any] = json.loads(result.text_result_for_llm)
    return report


@pytest.mark.subprocess
@pytest.mark.parametrize("fork_server", [True, False], ids=["forked", "spawned"])
def test_an_extension_sees_none_of_its_hosts_secrets(
    project: Project, monkeypatch: pytest.MonkeyPatch, fork_server: bool
) -> None:
    """Neither os.environ nor the process's initial environment block (/proc/self/environ,
    which a forked process inherits from the fork server) holds a sensitive variable."""
    withheld = {**SECRETS, **CREDENTIAL_URLS}
    for name, value in withheld.items():
        monkeypatch.setenv(name, value)
    project.add_extension("spy", REPORTER.format(request=""))

    async def scenario() -> None:
        async with project.host(watch=False, fork_server=fork_server) as host:
            report = await _report(host)
            seen = set(report["environ"]) | set(report["initial"])
            assert not seen & set(withheld), seen & set(withheld)
            assert report["environ"]["PATH"] == os.environ["PATH"]
            assert report["environ"]["SESSION_ID"] == host.session_id

    run(scenario())


@pytest.mark.subprocess
@pytest.mark.parametrize("fork_server", [True, False], ids=["forked", "spawned"])
def test_a_requested_variable_is_refused_until_granted_then_exactly_it_arrives(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fork_server: bool
) -> None:
    """The join fails naming the variable and the command that grants it; after the grant the
    extension has that variable and still none of the others."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    if not fork_server:
        monkeypatch.setenv("EXTENSION_HOST_FORK_SERVER", "0")
    project.add_extension("spy", REPORTER.format(request=', requested_environment_variables=["GITHUB_TOKEN"]'))

    assert project.cli("list", "--json") == 1
    (entry,) = json.loads(capsys.readouterr().out)["extensions"]
    assert entry["status"] == "failed"
    assert entry["error"] == (
        "requests environment variable GITHUB_TOKEN, not granted; to grant: extensions grant spy GITHUB_TOKEN"
    )
    assert entry["environment"] == {"requested": ["GITHUB_TOKEN"], "granted": [], "missing": ["GITHUB_TOKEN"]}

    assert project.cli("grant", "spy", "GITHUB_TOKEN") == 0
    assert "granted GITHUB_TOKEN to project:spy" in capsys.readouterr().out

    assert project.cli("list", "--json") == 0
    (entry,) = json.loads(capsys.readouterr().out)["extensions"]
    assert entry["status"] == "running"
    assert entry["environment"] == {"requested": ["GITHUB_TOKEN"], "granted": ["GITHUB_TOKEN"], "missing": []}
    assert "ghp_secret" not in json.dumps(entry)  # names only, never values

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            report = await _report(host)
            assert report["environ"]["GITHUB_TOKEN"] == "ghp_secret"
            assert set(report["environ"]) & set(SECRETS) == {"GITHUB_TOKEN"}
            assert "GITHUB_TOKEN" not in report["initial"]  # delivered over the protocol, not at launch

    run(scenario())


@pytest.mark.subprocess
def test_unset_and_ordinary_requests_need_no_grant(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request for a variable the host lacks, or one that is not withheld, joins at once."""
    monkeypatch.delenv("NEVER_SET_TOKEN", raising=False)
    monkeypatch.setenv("PLAIN_SETTING", "on")
    project.add_extension(
        "spy", REPORTER.format(request=', requested_environment_variables=["NEVER_SET_TOKEN", "PLAIN_SETTING"]')
    )

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            info = host.extension("spy")
            assert info.status == "running", info.error
            assert info.environment_granted == ("PLAIN_SETTING",)
            report = await _report(host)
            assert "NEVER_SET_TOKEN" not in report["environ"]

    run(scenario())


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("request_code", "message"),
    [
        ('["GITHUB TOKEN"]', "is not an environment variable name"),
        ("[f'VAR_{n}' for n in range(65)]", "at most 64"),
    ],
    ids=["bad name", "too many"],
)
def test_a_malformed_request_fails_the_extension(project: Project, request_code: str, message: str) -> None:
    project.add_extension("spy", REPORTER.format(request=f", requested_environment_variables={request_code}"))

    async def scenario() -> None:
        async with project.host(watch=False) as host:
            info = host.extension("spy")
            assert info.status == "failed"
            assert info.error is not None and message in info.error

    run(scenario())


def test_grant_refuses_bad_names_and_unknown_extensions(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad variable name is bad usage (2); an extension nobody discovered fails (1), naming the known ones."""
    project.add_extension("spy", "")
    assert project.cli("grant", "spy", "NOT-A-NAME") == 2
    assert "'NOT-A-NAME' is not an environment variable name" in capsys.readouterr().err
    assert project.cli("grant", "nope", "GITHUB_TOKEN") == 1
    assert "no extension named 'nope'; discovered: project:spy" in capsys.readouterr().err
    assert project.cli("grant", "spy", "GITHUB_TOKEN", "NPM_TOKEN", "--json") == 0
    assert json.loads(capsys.readouterr().out)["granted"] == ["GITHUB_TOKEN", "NPM_TOKEN"]
    assert project.cli("grant", "spy", "NPM_TOKEN", "--revoke") == 0
    assert "took back NPM_TOKEN from project:spy; it is granted: GITHUB_TOKEN" in capsys.readouterr().out
    assert project.cli("grant", "spy", "--json") == 0
    assert json.loads(capsys.readouterr().out)["granted"] == ["GITHUB_TOKEN"]


# -- the host's own environment ------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE is Linux's")
@pytest.mark.subprocess
def test_a_started_host_is_not_dumpable(project: Project) -> None:
    """After start(), the host's process refuses /proc/<pid>/environ to its same-user children."""

    async def scenario() -> None:
        async with project.host(watch=False):
            libc = ctypes.CDLL(None, use_errno=True)
            assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE

    run(scenario())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE is Linux's")
def test_a_protected_process_environment_is_unreadable_to_a_process_of_the_same_user() -> None:
    """Without protection a same-user process reads /proc/<pid>/environ; with it, it cannot.

    The check runs as an unprivileged user (root reads everything): the test forks, and the
    child takes uid 65534 when the test runs as root.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the "host": report what a child of the same user could read, then exit
        os.close(read_end)
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(4, 1, 0, 0, 0)  # dumpable, as any process that did not protect itself
            before = _can_read_environ_of(os.getpid())
            protected = protect_host_environment()
            after = _can_read_environ_of(os.getpid())
            os.write(write_end, json.dumps([before, protected, after]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answers:
        data = answers.read()
    os.waitpid(pid, 0)
    assert json.loads(data) == [True, True, False]


def _can_read_environ_of(target: int) -> bool:
    """In a forked child of the same user: can it read ``target``'s environment?"""
    reader = os.fork()
    if reader == 0:
        try:
            with open(f"/proc/{target}/environ", "rb") as handle:
                handle.read()
            code = 0
        except PermissionError:
            code = 1
        os._exit(code)
    _, status = os.waitpid(reader, 0)
    return os.waitstatus_to_exitcode(status) == 0


@pytest.mark.subprocess
def test_a_grant_reloads_the_extension_in_the_running_host(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An extension failed for want of a variable runs as soon as extensions grant gives it."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_running")
    project.add_extension("spy", REPORTER.format(request=', requested_environment_variables=["GITHUB_TOKEN"]'))

    async def scenario() -> None:
        async with project.host(watch=False) as host, ControlServer(host):
            assert host.extension("spy").status == "failed"
            assert await project.cli_in_thread("grant", "spy", "GITHUB_TOKEN") == 0
            out = capsys.readouterr().out
            assert "the running host applied it" in out and "reloaded" in out, out
            assert host.extension("spy").status == "running"
            assert (await _report(host))["environ"]["GITHUB_TOKEN"] == "ghp_running"

    run(scenario())


@pytest.mark.subprocess
@pytest.mark.parametrize("answer", ["y", "n"])
def test_dev_on_a_terminal_asks_to_grant_a_missing_variable(
    project: Project, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    """dev names the extension and the exact list; y records the grant and reloads it, n leaves
    it failed and is not asked again for that set after a save."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_dev")
    folder = project.add_extension("spy", REPORTER.format(request=', requested_environment_variables=["GITHUB_TOKEN"]'))

    async def scenario() -> None:
        async with running_dev(project, terminal=True) as dev:
            await dev.expect(r"^project:spy asks for the environment variable GITHUB_TOKEN\. Grant it\? \[y/N\]")
            await dev.send(answer)
            if answer == "y":
                await dev.expect(r"^granted GITHUB_TOKEN to project:spy")
                await dev.expect(r"^project:spy: reloaded")
                await dev.send("call report")
                await dev.expect("ghp_dev")
            else:
                await dev.expect(r"^not granted: project:spy stays failed")
                (folder / "extension.py").write_text((folder / "extension.py").read_text() + "\n# saved\n")
                await dev.expect(r"^project:spy: kept|^project:spy: failed")
                await dev.send("list")
                await dev.expect(r"^project:spy\s+failed")
                declined = next(n for n, line in enumerate(dev.seen) if line.startswith("not granted"))
                assert not any("[y/N]" in line for line in dev.seen[declined:])
            await dev.send("quit")
            async with asyncio.timeout(30):
                assert await dev.process.wait() == 0

    run(scenario())
    assert TrustStore(project.home).granted(project.root, "project", "spy") == (
        {"GITHUB_TOKEN"} if answer == "y" else frozenset()
    )


NAMES = st.sampled_from(sorted({*SECRETS, *CREDENTIAL_URLS, *ORDINARY, "NPM_TOKEN", "UNSET_TOKEN", "PLAIN"}))
VALUES = st.text(max_size=5) | st.sampled_from(sorted({*CREDENTIAL_URLS.values(), *ORDINARY.values()}))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, database=None)
@given(
    requested=st.lists(NAMES, max_size=12),
    host=st.dictionaries(NAMES, VALUES, max_size=12),
    granted=st.frozensets(NAMES, max_size=12),
    revoked=st.frozensets(NAMES, max_size=12),
)
def test_a_request_never_yields_an_ungranted_secret(
    requested: list[str], host: dict[str, str], granted: frozenset[str], revoked: frozenset[str]
) -> None:
    """Whatever is asked: values come from the host, a sensitive one only if granted, and the
    missing names are exactly the sensitive, set, ungranted ones asked for; what a revocation
    takes back is exactly what it held through a grant."""
    grant = resolve_request(requested, host, granted)
    sensitive = {name for name in host if is_sensitive(name, host[name])}
    assert all(host[name] == value for name, value in grant.values.items())
    assert all(name in granted for name in grant.values if name in sensitive)
    assert set(grant.missing) == {n for n in requested if n in sensitive and n not in granted}
    assert set(grant.values) | set(grant.missing) == {n for n in requested if n in host}
    assert set(grant.withheld) == set(grant.values) & sensitive
    taken = grant.revoked(granted - revoked)
    assert set(taken) == set(grant.withheld) & revoked
    after = grant.taken_back(taken)
    assert set(after.values) == set(grant.values) - set(taken)
    assert set(after.missing) == set(grant.missing) | set(taken)
    assert after.revoked(granted - revoked) == ()


# -- URLs with credentials in them -------------------------------------------------------------

SCHEMES = st.sampled_from(["http", "https", "HTTPS", "redis", "rediss", "postgres", "mysql", "amqp", "ftp", "ssh"])
PLAIN_NAMES = st.from_regex(r"[A-Z][A-Z0-9]{0,6}(_[A-Z0-9]{1,6}){0,2}", fullmatch=True).filter(
    lambda name: not is_sensitive(name)
)
HOSTS = st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z]{2,5}){0,2}(:[0-9]{1,5})?", fullmatch=True)
PATHS = st.from_regex(r"(/[A-Za-z0-9._~-]{0,8}){0,3}", fullmatch=True)
QUERIES = st.lists(
    st.tuples(
        st.sampled_from(["q", "page", "lang", "ref", "v", "sslmode"]), st.from_regex(r"[a-z0-9:@]{0,8}", fullmatch=True)
    ),
    max_size=3,
).map(lambda pairs: ("?" + "&".join(f"{key}={value}" for key, value in pairs)) if pairs else "")
USERINFO = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
SURROUNDING = st.sampled_from(["", "--index ", "first=https://pypi.org/simple ", "x "])


def _percent(text: str, safe: str) -> str:
    return quote(text, safe=safe)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, database=None)
@given(
    name=PLAIN_NAMES,
    scheme=SCHEMES,
    user=st.text(max_size=8).map(lambda text: _percent(text, "@:")),
    password=USERINFO.map(lambda text: _percent(text, "@:")),
    host=HOSTS,
    path=PATHS,
    query=QUERIES,
    before=SURROUNDING,
)
def test_a_url_with_a_password_is_withheld_whatever_its_name_and_needs_a_grant(
    name: str, scheme: str, user: str, password: str, host: str, path: str, query: str, before: str
) -> None:
    """Any scheme, any user (even none), any password (``@`` and ``:`` in it too), anywhere in
    the value: the variable is withheld, and a request for it needs a grant."""
    value = f"{before}{scheme}://{user}:{password}@{host}{path}{query}"
    assert is_sensitive(name, value)
    assert scrub({name: value, "PATH": "/bin"}) == {"PATH": "/bin"}
    assert resolve_request([name], {name: value}, ()).missing == (name,)
    given = resolve_request([name], {name: value}, {name})
    assert (given.values, given.withheld) == ({name: value}, (name,))


@pytest.mark.slow
@settings(max_examples=200, deadline=None, database=None)
@given(
    scheme=st.sampled_from(["http", "https", "git+https", "HTTP"]),
    token=USERINFO.map(lambda text: _percent(text, "@")),
    host=HOSTS,
    path=PATHS,
)
def test_an_http_url_with_a_user_name_alone_is_withheld_as_a_token(
    scheme: str, token: str, host: str, path: str
) -> None:
    assert carries_credentials(f"{scheme}://{token}@{host}{path}")


@pytest.mark.slow
@settings(max_examples=300, deadline=None, database=None)
@given(
    scheme=SCHEMES,
    login=st.sampled_from(["", "git@", "app@", "anonymous@"]),
    host=HOSTS,
    path=PATHS,
    query=QUERIES,
    before=SURROUNDING,
)
def test_a_url_without_credentials_is_kept(
    scheme: str, login: str, host: str, path: str, query: str, before: str
) -> None:
    """No userinfo, or a login name alone where it is not a token (ssh, a database, ...), and no
    query parameter named like a credential: the variable stays."""
    if scheme.lower() in ("http", "https"):
        login = ""
    assert not carries_credentials(f"{before}{scheme}://{login}{host}{path}{query}")
