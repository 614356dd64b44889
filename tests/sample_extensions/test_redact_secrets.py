"""The redact_secrets sample: what it redacts, what it leaves alone, and its two hooks."""

from __future__ import annotations

import base64
import random
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from types import ModuleType

import pytest

from extension_protocol.hook_models import HookInvocation, PostToolUseInput, UserPromptSubmittedInput
from extension_protocol.hook_points import HOOK_POINTS
from helpers import SAMPLES, Project, load_module, run, sample_extension_module
from sdk_extension import ToolResult

EXTENSION_DIR = SAMPLES / "redact_secrets"

redact = load_module("sample_redact_secrets_redact", EXTENSION_DIR / "redact.py")

# The fake secrets are assembled at run time so that secret scanners (GitHub push protection
# and friends) do not flag this file; they have the exact shapes of real ones.
MIXED = "a1B2c3D4e5F6g7H8i9J0"  # 20 characters: digits, lower and upper case
GITHUB_CLASSIC = "ghp_" + MIXED + "k1L2m3N4o5P6q7R8"
GITHUB_FINE_GRAINED = "github_pat_" + "11ABCDEFG0123456789abc" + "_" + MIXED * 2 + "x" * 19
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_STS_KEY_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
SLACK = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_RESTRICTED = "rk_" + "live_" + "51H8ZzQ2eZvKYlo2C0000"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
OPENAI = "sk-" + "proj-" + MIXED + MIXED
OPENAI_LEGACY = "sk-" + MIXED * 2 + "ABCDEFGH"
ANTHROPIC = "sk-" + "ant-api03-" + MIXED * 4 + "-AA"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naZ4Ml5b0c4qL1a3Tw=="
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
OPENSSH = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + PEM_BODY + "\n-----END OPENSSH PRIVATE KEY-----"

SECRETS = [
    # (text, kind, the text after redaction)
    (f"export GITHUB_TOKEN={GITHUB_CLASSIC}", "github-token", "export GITHUB_TOKEN=[REDACTED:github-token]"),
    (f"token: {GITHUB_FINE_GRAINED}", "github-token", "token: [REDACTED:github-token]"),
    ("gho_" + MIXED + "k1L2m3N4o5P6q7R8 and more", "github-token", "[REDACTED:github-token] and more"),
    ("x-access-token:ghs_" + MIXED + "k1L2m3N4o5P6q7R8", "github-token", "x-access-token:[REDACTED:github-token]"),
    (f"id={AWS_KEY_ID};", "aws-access-key-id", "id=[REDACTED:aws-access-key-id];"),
    (f"{AWS_STS_KEY_ID}", "aws-access-key-id", "[REDACTED:aws-access-key-id]"),
    (
        f"aws_secret_access_key = {AWS_SECRET}",
        "aws-secret-access-key",
        "aws_secret_access_key = [REDACTED:aws-secret-access-key]",
    ),
    (
        f'"SecretAccessKey": "{AWS_SECRET}",',
        "aws-secret-access-key",
        '"SecretAccessKey": "[REDACTED:aws-secret-access-key]",',
    ),
    (f"SLACK_BOT={SLACK}", "slack-token", "SLACK_BOT=[REDACTED:slack-token]"),
    (f"post to {SLACK_HOOK} now", "slack-webhook", "post to [REDACTED:slack-webhook] now"),
    (f"Stripe::Key = '{STRIPE}'", "stripe-key", "Stripe::Key = '[REDACTED:stripe-key]'"),
    (f"{STRIPE_RESTRICTED}", "stripe-key", "[REDACTED:stripe-key]"),
    (f"maps?key={GOOGLE}&q=x", "google-api-key", "maps?key=[REDACTED:google-api-key]&q=x"),
    (f"OPENAI_API_KEY={OPENAI}", "openai-key", "OPENAI_API_KEY=[REDACTED:openai-key]"),
    (f"key {OPENAI_LEGACY}.", "openai-key", "key [REDACTED:openai-key]."),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", "anthropic-key", "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]"),
    (f"cookie: session={JWT}; Path=/", "jwt", "cookie: session=[REDACTED:jwt]; Path=/"),
    (f"key:\n{PEM}\nafter", "private-key", "key:\n[REDACTED:private-key]\nafter"),
    (OPENSSH, "private-key", "[REDACTED:private-key]"),
    (
        "-----BEGIN PRIVATE KEY-----\\n" + PEM_BODY.replace("\n", "\\n") + "\\n-----END PRIVATE KEY-----\\n",
        "private-key",
        "[REDACTED:private-key]\\n",
    ),
    ("Authorization: Bearer abcdef0123456789abcdef", "bearer-token", "Authorization: Bearer [REDACTED:bearer-token]"),
    ("password=hunter2hunter2", "password", "password=[REDACTED:password]"),
    ("DB_PASSWORD=correcthorse", "password", "DB_PASSWORD=[REDACTED:password]"),
    ("  db_pass: s3cr3t-value", "password", "  db_pass: [REDACTED:password]"),
    ('{"password": "Tr0ub4dor&3"}', "password", '{"password": "[REDACTED:password]"}'),
    ("mysql --password=hunter2hunter2 -u root", "password", "mysql --password=[REDACTED:password] -u root"),
    ('{\\"password\\": \\"abc123xyz9\\"}', "password", '{\\"password\\": \\"[REDACTED:password]\\"}'),
    ('export API_TOKEN="abc123def456ghi"', "secret", 'export API_TOKEN="[REDACTED:secret]"'),
    ("client_secret: 9f8e7d6c5b4a", "secret", "client_secret: [REDACTED:secret]"),
    ("X-Api-Key: abcdef0123456789", "secret", "X-Api-Key: [REDACTED:secret]"),
    ("const apiKey = 'k3y-for-the-api';", "secret", "const apiKey = '[REDACTED:secret]';"),
    ("SECRET_KEY=django-insecure-abc123", "secret", "SECRET_KEY=[REDACTED:secret]"),
    (
        "git clone https://alice:s3cret@example.com/repo.git",
        "url-password",
        "git clone https://alice:[REDACTED:url-password]@example.com/repo.git",
    ),
    (
        "DATABASE_URL=postgres://bob:p4ss:word@db.internal:5432/app",
        "url-password",
        "DATABASE_URL=postgres://bob:[REDACTED:url-password]@db.internal:5432/app",
    ),
]

LOOK_ALIKES = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "uuid=123e4567-e89b-12d3-a456-426614174000",
    "Move the task-list and the desk-lamp; ask-me-anything threads.",
    "pip install sk-learn-compatible-estimator-interface",
    "Enter your password and the token you received.",
    "password:",
    "token=abc",  # shorter than MIN_ASSIGNED_LENGTH
    "password = hunter2",  # 7 characters: also below the minimum
    "password: str",
    "token: Optional[str] = None",
    "token = self._next_token()",
    "password = getpass.getpass()",
    "apiKey: process.env.API_KEY,",
    "password: settings.DATABASE_PASSWORD",
    "f(password=correcthorse)",
    "if password == expected_password:",
    'password: "{{ vault_db_password }}"',
    "password: ${{ secrets.DB_PASSWORD }}",
    "API_TOKEN=$(cat ~/.token)",
    "password: ********",
    "password: 'must be at least 8 characters'",
    "secret: false",
    "max_tokens=4096",
    "nextPageToken: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3cTZvaDIx",
    "PWD=/home/me/project",
    "bypass=abcdefgh123",
    "https://example.com:8443/path@section",
    "ssh://git@github.com/org/repo.git",
    "https://user:${GIT_PASSWORD}@example.com/repo.git",
    "the Bearer authentication scheme",
    "AKIAisNotAnAccessKey",
    "github_pat_short",
    "ghp_tooShort123",
    "Error: -----BEGIN CERTIFICATE----- is not a private key",
    "[REDACTED:password] was already redacted",
]


def secret_id(case: tuple[str, str, str]) -> str:
    """A readable test id: the kind and the start of the text."""
    return f"{case[1]}:{case[0][:24]}"


# -- the patterns ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kind", "expected"), SECRETS, ids=[secret_id(c) for c in SECRETS])
def test_each_kind_of_secret_is_replaced_by_its_marker(text: str, kind: str, expected: str) -> None:
    """Every known shape of secret becomes [REDACTED:kind]; the text around it is kept."""
    result = redact.redact(text)
    assert result.text == expected
    assert [finding.kind for finding in result.findings] == [kind]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_and_code_are_left_alone(text: str) -> None:
    """SHAs, UUIDs, prose, placeholders, references and code that handles secrets are not secrets."""
    result = redact.redact(text)
    assert result.findings == ()
    assert result.text == text


def test_the_tables_cover_every_rule() -> None:
    """Each kind in RULES has at least one case in the table of secrets."""
    assert {rule.kind for rule in redact.RULES} == {kind for _, kind, _ in SECRETS}


def test_a_value_assigned_to_a_secret_key_is_redacted_even_when_it_looks_like_a_sha() -> None:
    """Under a secret-sounding key, a hex string is a secret; alone it is a commit."""
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    assert redact.redact(f"token: {sha}").text == "token: [REDACTED:secret]"
    assert redact.redact(f"commit {sha}").findings == ()


def test_generic_values_need_the_minimum_length() -> None:
    """Assigned values shorter than MIN_ASSIGNED_LENGTH (8) are kept; from 8 on they go."""
    assert redact.MIN_ASSIGNED_LENGTH == 8
    assert redact.redact("password=abc1234").findings == ()
    assert redact.redact("password=abc12345").text == "password=[REDACTED:password]"


def test_a_plain_word_is_a_value_in_an_env_file_but_a_name_in_code() -> None:
    """KEY=word alone on its line is redacted; the same word as a keyword argument is not."""
    assert redact.redact("DB_PASSWORD=correcthorse\n").text == "DB_PASSWORD=[REDACTED:password]\n"
    assert redact.redact("connect(password=correcthorse)").findings == ()
    assert redact.redact("password: correcthorse").findings == ()


def test_the_more_specific_rule_wins_when_findings_overlap() -> None:
    """A GitHub token in a token= assignment is one github-token, not also a generic secret."""
    result = redact.redact(f"token={GITHUB_CLASSIC}")
    assert result.counts == {"github-token": 1}
    assert result.text == "token=[REDACTED:github-token]"


def test_findings_give_kinds_counts_and_offsets_in_the_original_text() -> None:
    """Findings are in text order, keep no secret, and their offsets point into the input."""
    text = f"a={GITHUB_CLASSIC} b={AWS_KEY_ID}\npassword=hunter2hunter2\nc={GITHUB_CLASSIC}"
    result = redact.redact(text)
    assert result.count == 4
    assert result.counts == {"github-token": 2, "aws-access-key-id": 1, "password": 1}
    assert result.kinds == ["github-token", "aws-access-key-id", "password"]
    assert [text[f.start : f.end] for f in result.findings] == [
        GITHUB_CLASSIC,
        AWS_KEY_ID,
        "hunter2hunter2",
        GITHUB_CLASSIC,
    ]
    assert GITHUB_CLASSIC not in repr(result.findings)


def test_redacting_redacted_text_finds_nothing_more() -> None:
    """Markers are never mistaken for secrets, so redaction is stable."""
    everything = "\n".join(text for text, _, _ in SECRETS)
    once = redact.redact(everything)
    assert once.count == len(SECRETS)
    twice = redact.redact(once.text)
    assert twice.findings == () and twice.text == once.text


def test_a_truncated_private_key_is_redacted_as_far_as_its_body_goes() -> None:
    """Output cut before the END line still loses the key lines, not the text after them."""
    text = "-----BEGIN EC PRIVATE KEY-----\n" + PEM_BODY + "\n\n[output truncated]"
    assert redact.redact(text).text == "[REDACTED:private-key]\n\n[output truncated]"


def test_random_base64_image_data_has_no_findings() -> None:
    """300 KB of base64 (standard and URL-safe) of random bytes, as in a data: URI, is left alone."""
    data = random.Random(20240601).randbytes(300_000)
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = "data:image/png;base64," + encode(data).decode("ascii")
        assert redact.redact(text).findings == ()


def test_describe_gives_the_count_and_the_kinds_in_order_of_appearance() -> None:
    """The sentence for the agent names the count, the distinct kinds and what markers mean."""
    result = redact.redact(f"{JWT} password=hunter2hunter2 {JWT}")
    sentence = redact.describe(result.findings, "the prompt")
    assert sentence.startswith("3 secret(s) were redacted from the prompt (jwt, password).")
    assert "[REDACTED:<kind>]" in sentence


# -- the hooks -------------------------------------------------------------------------------


@pytest.fixture
def extension() -> Iterator[ModuleType]:
    """extension.py loaded as the host would find it, not joined."""
    with sample_extension_module("redact_secrets", "redact") as module:
        yield module


INVOCATION = HookInvocation(session_id="session-1")


def prompt_input(prompt: str) -> UserPromptSubmittedInput:
    """A prompt hook input as the SDK builds it."""
    return UserPromptSubmittedInput(timestamp=datetime.now(UTC), cwd="/tmp", prompt=prompt)


def tool_input(result: ToolResult, tool_name: str = "bash") -> PostToolUseInput:
    """A post-tool hook input as the SDK builds it."""
    return PostToolUseInput(
        timestamp=datetime.now(UTC),
        cwd="/tmp",
        tool_name=tool_name,
        tool_args={"command": "cat .env"},
        tool_result=result,
    )


def test_a_prompt_with_secrets_is_rewritten_and_the_agent_is_told(extension: ModuleType) -> None:
    """The prompt hook returns the redacted prompt and a sentence with the count and kinds."""
    prompt = f"deploy with {GITHUB_CLASSIC} and password=hunter2hunter2 please"
    output = extension.on_user_prompt_submitted(prompt_input(prompt), INVOCATION)
    assert output == {
        "modified_prompt": "deploy with [REDACTED:github-token] and password=[REDACTED:password] please",
        "additional_context": redact.describe(redact.redact(prompt).findings, "the prompt"),
    }
    assert output["additional_context"].startswith("2 secret(s) were redacted from the prompt (github-token, password)")
    wire = HOOK_POINTS["on_user_prompt_submitted"].output_to_wire(output)
    assert wire is not None and wire["modifiedPrompt"] == output["modified_prompt"]


def test_a_prompt_without_secrets_gets_no_opinion(extension: ModuleType) -> None:
    """A clean prompt returns None, so it goes through untouched."""
    assert extension.on_user_prompt_submitted(prompt_input("fix the task-list bug in 3f78685"), INVOCATION) is None


def test_a_tool_result_with_secrets_is_replaced_keeping_its_other_fields(extension: ModuleType) -> None:
    """Only the text changes: result type, session log, telemetry and binary results are kept."""
    result = ToolResult(
        f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}\nREGION=eu-west-1\n",
        "failure",
        session_log="cat .env",
        tool_telemetry={"bytes": 42},
        binary_results_for_llm=[{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
    )
    output = extension.on_post_tool_use(tool_input(result), INVOCATION)
    assert output is not None
    assert output["modified_result"] == ToolResult(
        "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]\nREGION=eu-west-1\n",
        "failure",
        session_log="cat .env",
        tool_telemetry={"bytes": 42},
        binary_results_for_llm=[{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
    )
    assert output["additional_context"].startswith(
        "1 secret(s) were redacted from the result of bash (aws-access-key-id)."
    )


def test_a_clean_tool_result_gets_no_opinion(extension: ModuleType) -> None:
    """A result without secrets returns None, so other hooks see the original."""
    result = ToolResult("commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: Test")
    assert extension.on_post_tool_use(tool_input(result), INVOCATION) is None


def test_secrets_in_a_failure_error_are_redacted_too(extension: ModuleType) -> None:
    """The error of a failed tool reaches the model as well, so it is redacted with the text."""
    result = ToolResult("connection failed", "failure", error=f"could not log in with {STRIPE}")
    output = extension.on_post_tool_use(tool_input(result), INVOCATION)
    assert output is not None
    assert output["modified_result"].text_result_for_llm == "connection failed"
    assert output["modified_result"].error == "could not log in with [REDACTED:stripe-key]"


def test_the_post_tool_output_is_valid_on_the_wire(extension: ModuleType) -> None:
    """The SDK's own output check accepts the dict and writes the result in camelCase."""
    result = ToolResult(f"token: {JWT}", "success", session_log="ran")
    output = extension.on_post_tool_use(tool_input(result), INVOCATION)
    wire = HOOK_POINTS["on_post_tool_use"].output_to_wire(output)
    assert wire is not None
    assert wire["modifiedResult"] == {
        "textResultForLlm": "token: [REDACTED:jwt]",
        "resultType": "success",
        "sessionLog": "ran",
    }
    assert wire["additionalContext"].startswith("1 secret(s) were redacted from the result of bash (jwt).")


# -- under the host --------------------------------------------------------------------------

LEAKY_TOOL = f"""
from sdk_extension import join_session, tool

@tool(description="Print the environment file")
def show_env() -> str:
    return "GITHUB_TOKEN={GITHUB_CLASSIC}\\nDEBUG=1\\n"

join_session(tools=[show_env])
"""


@pytest.mark.subprocess
def test_under_the_host_prompts_and_tool_results_reach_the_agent_redacted(project: Project) -> None:
    """Installed like a user would, the sample joins with its two hooks and redacts for real."""
    shutil.copytree(EXTENSION_DIR, project.root / ".github" / "extensions" / "redact_secrets")
    project.add_extension("leaky", LEAKY_TOOL)

    async def scenario() -> None:
        async with project.host() as host:
            sample = host.extension("redact_secrets")
            assert sample.status == "running", sample.error
            assert (sample.tools, set(sample.hooks)) == ((), {"on_user_prompt_submitted", "on_post_tool_use"})
            prompt = await host.submit_prompt(f"use {SLACK} to post")
            assert prompt.prompt == "use [REDACTED:slack-token] to post"
            assert prompt.additional_context is not None and "slack-token" in prompt.additional_context
            called = await host.call_tool("show_env")
            redacted = "GITHUB_TOKEN=[REDACTED:github-token]\nDEBUG=1\n"
            guidance = 'Tool "show_env" succeeded. Additional guidance from postToolUse hooks:\n'
            assert called.text_result_for_llm == f"{redacted}\n\n{guidance}{called.additional_context}"
            assert called.result_type == "success"

    run(scenario())
