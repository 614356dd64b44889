"""Records a Python extension's protocol traffic for the conformance suite (imported first by
the extension: ``import tap``, this file copied beside ``extension.py``).

The SDK's launcher has already claimed the protocol's file descriptors
(:func:`sdk_extension._stdio.claim_protocol_stdio`) when the extension runs; this puts a pipe in
front of each, with a thread that appends every chunk to ``$CONFORMANCE_TAP_DIR/<folder
name>.jsonl`` (``{"d": "in"|"out", "pid", "b": base64}``; first ``{"d": "meta", "pid", "sdk"}``,
the SDK's folder) and passes it on. The same under this
host and under ``extensions export copilot``'s launcher. Without the variable it does nothing.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path

import sdk_extension
from sdk_extension._stdio import claim_protocol_stdio

__all__ = ["install"]


def _pump(source: int, target: int, direction: str, file: Path, lock: threading.Lock) -> None:
    while True:
        try:
            chunk = os.read(source, 65536)
        except OSError:
            chunk = b""
        if chunk:
            line = json.dumps({"d": direction, "pid": os.getpid(), "b": base64.b64encode(chunk).decode()})
            with lock, open(file, "a") as out:
                out.write(line + "\n")
        try:
            if not chunk:
                os.close(target)
                return
            view = memoryview(chunk)
            while view:
                view = view[os.write(target, view) :]
        except OSError:
            return


def install() -> None:
    """Tap the protocol's descriptors, once, when ``$CONFORMANCE_TAP_DIR`` is set."""
    folder = os.environ.get("CONFORMANCE_TAP_DIR")
    if not folder:
        return
    file = Path(folder) / f"{Path(__file__).resolve().parent.name}.jsonl"
    lock = threading.Lock()
    with open(file, "a") as out:  # which SDK this process runs with
        out.write(json.dumps({"d": "meta", "pid": os.getpid(), "sdk": str(Path(sdk_extension.__file__).parent)}) + "\n")
    protocol_in, protocol_out = claim_protocol_stdio()
    real_in, real_out = os.dup(protocol_in), os.dup(protocol_out)
    feed_read, feed_write = os.pipe()
    os.dup2(feed_read, protocol_in)  # the SDK reads what the tap passes on
    os.close(feed_read)
    sink_read, sink_write = os.pipe()
    os.dup2(sink_write, protocol_out)  # and writes into the tap
    os.close(sink_write)
    for source, target, direction in ((real_in, feed_write, "in"), (sink_read, real_out, "out")):
        threading.Thread(target=_pump, args=(source, target, direction, file, lock), daemon=True).start()


install()
