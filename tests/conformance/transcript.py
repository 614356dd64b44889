"""One side's record of a scenario: the frames an extension's tap wrote, as messages, normalised.

:func:`read_tap` turns a tap file (``tap.mjs``/``tap.py``: JSON lines of raw chunks, per process
and direction) back into JSON-RPC messages in the order the extension saw them. Each
:class:`Message` has a *subject*, what the comparison groups it by: the method of a request or
notification (``hooks.invoke`` by hook type: ``hook preToolUse``; ``session.event`` by event type:
``event tool.execution_start``), or ``result of SUBJECT`` / ``error of SUBJECT`` for an answer,
paired with its request by id on that connection. :func:`normalise` rewrites what legitimately
varies between two runs (ids, the session id, times, pids, the run's folders) into placeholders;
the raw values stay in :attr:`Message.raw` for the checks of which ids are the same
(:mod:`conformance.compare`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = ["Message", "Transcript", "build", "normalise", "read_tap", "sdks"]

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ISO_TIME: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
_CALL_ID: Final = re.compile(r"call_\w+")
"""A tool call id as a model API gives it (``call_0``)."""
_VARYING_NUMBERS: Final = frozenset(
    {"timestamp", "timestampMs", "durationMs", "duration", "pid", "timeToFirstTokenMs", "startTime", "modifiedTime"}
)
"""Keys whose numbers differ from run to run (times, durations, process ids)."""
_ID_KEYS: Final = frozenset({"id", "parentId", "handle"})
"""Keys that hold ids whatever their name (besides ``...Id``)."""
_SPLIT: Final = {"result of session.commands.list": ("commands", "kind")}
"""Answers whose list items are compared in groups, each its own subject: the items of list
``commands`` by their ``kind`` (``result of session.commands.list [kind=client]``)."""
_EVENT_KINDS: Final = {"hook.start": "hookType", "hook.end": "hookType"}
"""Events compared per value of a ``data`` key (``event hook.start preToolUse``)."""
_KEYS_ONLY: Final = {"result of session.getMessages": "events"}
"""Answers whose list items are compared by their keys alone (the events are compared as
events already)."""


@dataclass(frozen=True)
class Message:
    """One JSON-RPC message on one extension's connection.

    ``direction`` is ``"to extension"`` or ``"from extension"``; ``body`` is what the comparison
    reads (a request's params, a result, an event's data with the envelope keys beside it),
    normalised; ``raw`` the same before normalisation.
    """

    index: int
    pid: int
    direction: str
    subject: str
    body: Any
    raw: Any


@dataclass
class Transcript:
    """What one extension exchanged in one run of a scenario, on one side."""

    side: str
    """``cli`` or ``host``."""
    extension: str
    sdk: str
    """Which SDK the extension ran with (for the header of the dump)."""
    messages: list[Message] = field(default_factory=list)

    def subjects(self) -> list[str]:
        return [message.subject for message in self.messages]

    def dump(self) -> str:
        """The transcript as text: a header, then one line per message, in order."""
        lines = [f"# side: {self.side}", f"# extension: {self.extension}", f"# sdk: {self.sdk}"]
        for message in self.messages:
            arrow = "->" if message.direction == "to extension" else "<-"
            body = json.dumps(message.body, sort_keys=True)
            lines.append(f"{message.index:4} pid{message.pid} {arrow} {message.subject}: {body}")
        return "\n".join(lines) + "\n"


def _frames(data: bytes) -> Iterator[tuple[int, Any]]:
    """Complete ``Content-Length`` frames in ``data``: (offset of the frame's end, message)."""
    offset = 0
    while True:
        head_end = data.find(b"\r\n\r\n", offset)
        if head_end < 0:
            return
        length = None
        for line in data[offset:head_end].split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None or head_end + 4 + length > len(data):
            return
        end = head_end + 4 + length
        yield end, json.loads(data[head_end + 4 : end])
        offset = end


def read_tap(path: Path) -> list[tuple[int, int, str, Any]]:
    """The messages in a tap file: (record number, pid, direction, message), in the order they
    passed (a message counts as passed when the record holding its last byte was written). A
    record cut short is left out: a tapped process that exits while its tap thread is writing
    (a daemon thread) ends that write where it is."""
    streams: dict[tuple[int, str], bytearray] = {}
    boundaries: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for number, line in enumerate(path.read_text().splitlines()):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("d") not in ("in", "out"):
            continue
        key = (int(record["pid"]), str(record["d"]))
        stream = streams.setdefault(key, bytearray())
        stream += base64.b64decode(record["b"])
        boundaries.setdefault(key, []).append((len(stream), number))
    found: list[tuple[int, int, str, Any]] = []
    for key, stream in streams.items():
        position = 0
        for end, message in _frames(bytes(stream)):
            while boundaries[key][position][0] < end:
                position += 1
            direction = "to extension" if key[1] == "in" else "from extension"
            found.append((boundaries[key][position][1], key[0], direction, message))
    found.sort(key=lambda item: item[0])
    return found


def sdks(path: Path) -> list[str]:
    """The SDK each process of a tap file said it runs with (its ``meta`` records), in order."""
    found = []
    for line in path.read_text().splitlines() if path.exists() else []:
        record = json.loads(line) if line.strip() else {}
        if record.get("d") == "meta":
            found.append(str(record.get("sdk")))
    return list(dict.fromkeys(found))


def build(side: str, extension: str, sdk: str, path: Path, replacements: Mapping[str, str]) -> Transcript:
    """The transcript of the tap file ``path`` (empty when the extension never wrote one)."""
    transcript = Transcript(side, extension, sdk)
    if not path.exists():
        return transcript
    pending: dict[tuple[int, str, Any], str] = {}
    for index, (_, pid, direction, message) in enumerate(read_tap(path)):
        if not isinstance(message, dict):
            continue
        subject, raw = _subject(message, pid, direction, pending)
        for part_subject, part in _parts(subject, raw):
            body = normalise(part, replacements)
            transcript.messages.append(Message(index, pid, direction, part_subject, body, part))
    return transcript


def _parts(subject: str, raw: Any) -> Iterator[tuple[str, Any]]:
    """The message as the comparison takes it (see :data:`_SPLIT` and :data:`_KEYS_ONLY`)."""
    if subject in _SPLIT and isinstance(raw, dict) and isinstance(raw.get(_SPLIT[subject][0]), list):
        name, key = _SPLIT[subject]
        groups: dict[str, list[Any]] = {}
        for item in raw[name]:
            groups.setdefault(str(item.get(key)) if isinstance(item, dict) else "?", []).append(item)
        for value, items in groups.items():
            yield f"{subject} [{key}={value}]", {**raw, name: items}
        return
    if subject in _KEYS_ONLY and isinstance(raw, dict) and isinstance(raw.get(_KEYS_ONLY[subject]), list):
        name = _KEYS_ONLY[subject]
        yield subject, {**raw, name: [dict.fromkeys(item) if isinstance(item, dict) else item for item in raw[name]]}
        return
    yield subject, raw


def _subject(
    message: dict[str, Any], pid: int, direction: str, pending: dict[tuple[int, str, Any], str]
) -> tuple[str, Any]:
    method = message.get("method")
    params = message.get("params")
    if isinstance(method, str):
        subject = method
        raw: Any = params
        if method == "session.event" and isinstance(params, dict) and isinstance(params.get("event"), dict):
            event = params["event"]
            subject = f"event {event.get('type')}"
            raw = {**{k: v for k, v in event.items() if k != "data"}, "data": event.get("data")}
            kind = _EVENT_KINDS.get(str(event.get("type")))
            if kind is not None and isinstance(event.get("data"), dict):
                subject += f" {event['data'].get(kind)}"
        elif method == "hooks.invoke" and isinstance(params, dict):
            subject = f"hook {params.get('hookType')}"
            raw = params.get("input")
        if "id" in message:
            pending[(pid, direction, message["id"])] = subject
        return subject, raw
    answering = "from extension" if direction == "to extension" else "to extension"
    asked = pending.pop((pid, answering, message.get("id")), "unknown request")
    if "error" in message:
        return f"error of {asked}", message["error"]
    return f"result of {asked}", message.get("result")


def _key(key: str) -> str:
    """A dict key as compared: a tool call id or a uuid is ``<id>``."""
    return "<id>" if _UUID.fullmatch(key) or _CALL_ID.fullmatch(key) else key


def normalise(value: Any, replacements: Mapping[str, str], key: str = "") -> Any:
    """``value`` with what varies between runs replaced: the session id by ``<session>``, other
    ids and uuids by ``<id>``, times by ``<time>``, varying numbers by ``<n>``, and each of
    ``replacements`` (a run's folders: longest first) by its placeholder."""
    if isinstance(value, dict):  # a key may be an id too (hook.end's output per tool call id)
        return {_key(k): normalise(v, replacements, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, replacements, key) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return "<n>" if key in _VARYING_NUMBERS else value
    if not isinstance(value, str):
        return value
    text = value
    for original, placeholder in replacements.items():
        text = text.replace(original, placeholder)
    if key in _ID_KEYS or (key.endswith(("Id", "Ids")) and key != "sessionId" and text != "<session>"):
        return "<id>"
    text = _UUID.sub("<id>", text)
    return _ISO_TIME.sub("<time>", text)
