"""One side's records as a transcript: each message the server sent under a *subject*, normalised,
and the comparison of two transcripts as :class:`~conformance.compare.Difference` lines.

A subject is the step and what the message is: ``turn: action chat/toolCallStart`` (an action
envelope, by the action's type), ``sessions: root/sessionAdded`` (another notification),
``sessions: result of createSession`` / ``error of ...`` (the answer to the request the script
labelled so), ``cancel: note waited in vain`` (the client waited for something that never came).
What the client sent is kept in the dump, not compared: both sides get the same script.

:func:`normalise` rewrites what legitimately varies between runs and servers into placeholders:
the run's folders, the model's and the fake GitHub's addresses (given as replacements); session
and chat URIs, UUIDs, 32-digit hex ids, tool call and part ids, ISO times; sequence numbers,
durations and token counts; JSON held in a string (a tool's input) to one spacing; and free
text (anything with a space or longer than :data:`_WORD` characters), so
what is compared is the shape and the vocabulary (types, kinds, states), not prose.

:func:`compare` groups by subject and compares key paths and values as the extension conformance
suite does (:func:`conformance.compare.compare_shapes`), so neither interleaving nor counts of
repeated messages count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from conformance.compare import Difference, compare_shapes, shapes
from conformance.transcript import Message

from ahp_conformance.ahp_client import STEPS, Record

__all__ = ["compare", "dump", "lines", "normalise", "transcript"]

_PATTERNS: Final = (
    (re.compile(r"ahp-session:/[\w.-]+"), "ahp-session:/<id>"),
    (re.compile(r"ahp-chat:/[\w.-]+"), "ahp-chat:/<id>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<hex>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<time>"),
    (re.compile(r"\bcall_\w+"), "<call>"),
)
_COUNTS: Final = frozenset(
    {
        "serverSeq",
        "fromSeq",
        "lastSeenServerSeq",
        "duration",
        "durationMs",
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
    }
)
"""Keys whose numbers differ from run to run."""
_WORD: Final = 64
_IDS: Final = frozenset({"toolCallId", "partId", "id", "eventId", "messageId"})
"""Keys whose strings are ids each server makes its own way (a model's ``call_0``, a UUID)."""
_JSON_TEXT: Final = frozenset({"toolInput"})
"""Keys whose strings are JSON: compared as JSON, not as their spacing."""


def normalise(value: Any, replacements: Mapping[str, str], key: str = "") -> Any:
    """``value`` with what varies between runs and servers replaced (see the module's doc)."""
    if isinstance(value, dict):
        return {name: normalise(item, replacements, name) for name, item in value.items()}
    if isinstance(value, list):
        return [normalise(item, replacements, key) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return "<n>" if key in _COUNTS else value
    if key in _IDS:
        return "<id>"
    text = str(value)
    if key in _JSON_TEXT:
        try:
            text = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
        except ValueError:
            pass
        else:
            return text if len(text) <= _WORD else "<text>"
    for raw in sorted(replacements, key=len, reverse=True):
        if raw:
            text = text.replace(raw, replacements[raw])
    for pattern, placeholder in _PATTERNS:
        text = pattern.sub(placeholder, text)
    if len(text) > _WORD or re.search(r"\s", text):
        return "<text>"
    return text


def _subject(record: Record) -> tuple[str, Any] | None:
    message = record.message
    if record.direction == "client":
        return f"note {message.get('note')}", {k: v for k, v in message.items() if k != "note"}
    if record.direction != "received":
        return None
    if "result" in message:
        return f"result of {record.label}", message["result"]
    if "error" in message:
        return f"error of {record.label}", message["error"]
    method = str(message.get("method"))
    params = message.get("params")
    if "id" in message:
        return f"request {method}", params
    if method == "action" and isinstance(params, dict):
        return f"action {(params.get('action') or {}).get('type')}", params
    return method, params


def transcript(records: Iterable[Record], replacements: Mapping[str, str]) -> list[Message]:
    """The messages the server sent and the client's notes, each under its subject, normalised."""
    found = []
    for index, record in enumerate(records):
        subject = _subject(record)
        if subject is None:
            continue
        name, body = subject
        found.append(
            Message(
                index,
                record.connection,
                record.direction,
                f"{record.step}: {name}",
                normalise(body, replacements),
                normalise(record.message, replacements),
            )
        )
    return found


def compare(cli: Iterable[Message], host: Iterable[Message]) -> list[Difference]:
    """Every difference between the CLI's and the host's transcript, subject by subject."""
    return compare_shapes(shapes(cli), shapes(host))


def dump(records: Iterable[Record], replacements: Mapping[str, str], folder: Path, prefix: str) -> list[Path]:
    """Write the normalised transcript, one file per step (``PREFIX-NN-STEP.json``: every message
    both ways, with its direction, connection and subject); the files written."""
    records = list(records)
    written = []
    for number, step in enumerate(STEPS, 1):
        entries = []
        for record in records:
            if record.step != step:
                continue
            subject = _subject(record)
            entries.append(
                {
                    "direction": record.direction,
                    "connection": record.connection,
                    "subject": None if subject is None else f"{step}: {subject[0]}",
                    "label": record.label,
                    "message": normalise(record.message, replacements),
                }
            )
        path = folder / f"{prefix}-{number:02d}-{step}.json"
        path.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written


def lines(differences: Iterable[Difference]) -> list[str]:
    """Each difference in one line, sorted, once."""
    return [difference.line() for difference in sorted(set(differences))]
