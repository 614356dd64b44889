"""Find secrets in text and replace each with a ``[REDACTED:<kind>]`` marker.

The rules are data: :data:`RULES` is an ordered list of named regular expressions, each with
the part of the match to replace and an optional check that turns away look-alikes. When two
findings overlap, the rule listed first wins (``GITHUB_TOKEN=ghp_…`` is a ``github-token``, not
a generic secret). Pattern-based, so neither complete nor free of false positives; it stays
away from code such as ``token = get_token()``. Pure: no I/O and no SDK import.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MIN_ASSIGNED_LENGTH",
    "RULES",
    "Finding",
    "Redaction",
    "Rule",
    "describe",
    "marker",
    "redact",
]

MIN_ASSIGNED_LENGTH: Final = 8
"""Shortest value redacted in a generic ``password=``/``token:`` assignment: shorter ones are
mostly placeholders, type names and fixtures (``token=abc``, ``password: str``)."""

MARKER_PREFIX: Final = "[REDACTED:"


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``, e.g. ``[REDACTED:github-token]``."""
    return f"{MARKER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of secret: where it is in text and which part of it to replace.

    ``groups`` names the capture groups holding the secret, tried in order (a value may be
    quoted several ways); when empty, the whole match is the secret. ``accept`` gets the
    secret text and the match, and returns False for a look-alike. ``hints`` are lowercase
    substrings of which the text must contain one for the rule to run at all: a scan for a
    literal is far cheaper than a regular expression, and most text has no ``ghp_`` in it.
    """

    kind: str
    pattern: re.Pattern[str]
    groups: tuple[str, ...] = ()
    accept: Callable[[str, re.Match[str]], bool] | None = None
    hints: tuple[str, ...] = ()

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` of each secret of this kind in ``text``."""
        found: list[tuple[int, int]] = []
        for match in self.pattern.finditer(text):
            group = next((g for g in self.groups if match.group(g) is not None), None)
            start, end = match.span(group) if group is not None else match.span()
            if start == end:
                continue
            if self.accept is not None and not self.accept(text[start:end], match):
                continue
            found.append((start, end))
        return found


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret found at ``start:end`` of the original text (not the secret: safe to log)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    """The redacted text and what was taken out of it."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def count(self) -> int:
        """How many secrets were redacted."""
        return len(self.findings)

    @property
    def counts(self) -> dict[str, int]:
        """How many secrets of each kind, kinds in order of first appearance."""
        return dict(Counter(finding.kind for finding in self.findings))

    @property
    def kinds(self) -> list[str]:
        """The distinct kinds found, in order of first appearance."""
        return list(self.counts)


# -- checks that turn look-alikes away -----------------------------------------------------


def _mixed(secret: str, _match: re.Match[str]) -> bool:
    # Generated keys mix digits and both cases; hyphenated prose ("sk-learn-compatible") does not.
    return any(c.isdigit() for c in secret) and secret.lower() != secret != secret.upper()


def _has_digit_and_letter(secret: str, _match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in secret) and any(c.isalpha() for c in secret)


def _not_masked(secret: str, _match: re.Match[str]) -> bool:
    # "user:****@host" and "user:${PASSWORD}@host" carry no secret.
    return len(set(secret)) > 1 and not secret.startswith(("$", "%", "{", "<"))


_CODE_REFERENCE: Final = re.compile(r"[A-Za-z_][A-Za-z_.]*")
_NOT_A_VALUE: Final = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "required", "optional", "redacted"}
)
_ENV_LINE_START: Final = re.compile(r"[ \t]*(?:export[ \t]+)?[\"']?\Z")


def _assigned_value(value: str, match: re.Match[str]) -> bool:
    """Whether the value of a ``password=``-style assignment looks like a real secret."""
    if len(value) < MIN_ASSIGNED_LENGTH or value.startswith(MARKER_PREFIX):
        return False
    if value.lower() in _NOT_A_VALUE or value.isdigit() or len(set(value)) == 1:
        return False
    # References, not values: ${VAR}, %(var)s, {{ var }}, <your-token>, $(cmd).
    if value.startswith(("$", "%", "{", "<")) or any(c.isspace() for c in value):
        return False
    if match.group("bare") is not None and _CODE_REFERENCE.fullmatch(value):
        # `token = next_token` and `password: settings.DB_PASSWORD` are code. In an env
        # file (`KEY=value` alone on its line, no spaces) a plain word is the value itself.
        line_start = match.string.rfind("\n", 0, match.start()) + 1
        before = match.string[line_start : match.start("key")]
        return match.group("sep") == "=" and bool(_ENV_LINE_START.match(before))
    return True


# -- the rules -----------------------------------------------------------------------------

_END: Final = r"(?![A-Za-z0-9_-])"  # a token ends where its alphabet does


def _spellings(words: Sequence[str], last: str) -> tuple[str, ...]:
    """``apikey``, ``api_key`` and ``api-key`` for each word: lookbehinds need fixed widths."""
    return tuple(f"{word}{sep}{last}" for word in words for sep in ("", "_", "-"))


def _assignment(kind: str, endings: Sequence[str], not_after: Sequence[str] = ()) -> Rule:
    """A rule for ``<key> = value`` in env, shell, YAML, JSON, TOML and code; the value only.

    The key is a whole word that ends in one of ``endings`` and in none of the fixed-width
    patterns ``not_after``. Matching the word first and looking back at its end is several
    times faster than trying each ending at each character.
    """
    key_end = "|".join(f"(?<={re.escape(ending)})" for ending in endings)
    excluded = "".join(f"(?<!{pattern})" for pattern in not_after)
    pattern = (
        r"(?<![\w.-])[\"']?"
        rf"(?P<key>[A-Za-z0-9_.-]++)(?:{key_end}){excluded}"
        r"(?:\\?[\"'])?(?P<sep>[ \t]*[:=][ \t]*)(?![:=])"
        r"(?:\\\"(?P<escaped>[^\"\\\n]*)\\\""
        r"|\"(?P<double>(?:[^\"\\\n]|\\.)*)\""
        r"|'(?P<single>(?:[^'\\\n]|\\.)*)'"
        # Possessive, so `token = make_token()` cannot shrink to `make_toke` to dodge the check.
        r"|(?P<bare>[^\s'\"`,;&(){}\[\]<>]++)(?![(\[]))"
    )
    return Rule(
        kind,
        re.compile(pattern, re.IGNORECASE),
        ("escaped", "double", "single", "bare"),
        _assigned_value,
        tuple(dict.fromkeys(ending[-4:].lower() for ending in endings)),
    )


RULES: Final[Sequence[Rule]] = (
    Rule(
        "private-key",
        re.compile(
            r"-----BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----"
            # Up to the matching END line (12000 characters hold an 8192-bit RSA key), or, in
            # truncated output, as far as the key body goes.
            r"(?:[\s\S]{0,12000}?-----END (?P=label)-----"
            r"|(?:(?:\s|\\n)*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))*)"
        ),
        hints=("private key",),
    ),
    Rule(
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*+"),
        hints=("eyj",),
    ),
    Rule(
        "github-token",
        re.compile(rf"\b(?:gh[pousr]_[A-Za-z0-9]{{36,251}}|github_pat_[A-Za-z0-9_]{{22,244}}){_END}"),
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule("anthropic-key", re.compile(rf"\bsk-ant-[A-Za-z0-9_-]{{32,}}{_END}"), (), _mixed, ("sk-ant-",)),
    Rule(
        "openai-key",
        re.compile(rf"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{{20,}}{_END}"),
        (),
        _mixed,
        ("sk-",),
    ),
    Rule("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), hints=("akia", "asia")),
    Rule(
        "aws-secret-access-key",
        re.compile(
            r"(?<![\w-])[\"']?(?:aws_?)?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        ("value",),
        hints=("secret",),
    ),
    Rule("slack-token", re.compile(rf"\bxox[abprs]-[A-Za-z0-9-]{{10,}}{_END}"), hints=("xox",)),
    Rule(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]{20,}"),
        hints=("hooks.slack.com",),
    ),
    Rule(
        "stripe-key",
        re.compile(rf"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}{_END}"),
        hints=("_live_", "_test_"),
    ),
    Rule("google-api-key", re.compile(rf"\bAIza[A-Za-z0-9_-]{{35}}{_END}"), hints=("aiza",)),
    Rule(
        "url-password",
        # scheme://user:password@host - the user stays readable, the password goes.
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]]*:(?P<value>[^\s/?#@\[\]]+)@(?=[A-Za-z0-9\[])"),
        ("value",),
        _not_masked,
        ("://",),
    ),
    Rule(
        "bearer-token",
        re.compile(r"\bBearer[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])", re.IGNORECASE),
        ("value",),
        _has_digit_and_letter,
        ("bearer",),
    ),
    # `pass` only as a word of its own (DB_PASS, pass:), so bypass= and compass: stay.
    _assignment("password", ("password", "passwd", "passphrase", "pass"), ("[A-Za-z0-9]pass",)),
    _assignment(
        "secret",
        ("secret", "token", *_spellings(("api", "access", "secret", "private"), "key")),
        # Pagination cursors (nextPageToken) are not credentials.
        _spellings(("page", "next"), "token"),
    ),
)
"""Every rule, most specific first: on overlapping findings the earlier rule wins."""


def redact(text: str, rules: Sequence[Rule] = RULES) -> Redaction:
    """Replace every secret in ``text`` with its kind's marker.

    Redacting already redacted text finds nothing more, so the result is stable.
    """
    taken: list[Finding] = []  # sorted by start, never overlapping
    folded = text.lower()
    for rule in rules:
        if rule.hints and not any(hint in folded for hint in rule.hints):
            continue
        for start, end in rule.spans(text):
            at = bisect.bisect(taken, start, key=lambda finding: finding.start)
            if (at > 0 and taken[at - 1].end > start) or (at < len(taken) and taken[at].start < end):
                continue  # an earlier, more specific rule already has (part of) it
            taken.insert(at, Finding(rule.kind, start, end))
    if not taken:
        return Redaction(text, ())
    parts: list[str] = []
    position = 0
    for finding in taken:
        parts.append(text[position : finding.start])
        parts.append(marker(finding.kind))
        position = finding.end
    parts.append(text[position:])
    return Redaction("".join(parts), tuple(taken))


def describe(findings: Sequence[Finding], where: str) -> str:
    """One sentence for the agent, e.g. ``2 secret(s) were redacted from the prompt (jwt, password)``."""
    kinds = ", ".join(dict.fromkeys(finding.kind for finding in findings))
    return (
        f"{len(findings)} secret(s) were redacted from {where} ({kinds}). "
        f"Each {MARKER_PREFIX}<kind>] marker stands for a value you cannot see; "
        "never write a marker into a file or command as if it were the real value."
    )
