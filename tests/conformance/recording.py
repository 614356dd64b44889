"""Running one scenario on one side and keeping what the extension and the model saw.

:func:`record` builds the scenario's project in a fresh :class:`~real_agents.runner.Workspace`
(the extension, its tap beside it, the scenario's other files; a Python extension also exported with ``extensions export
copilot``, on both sides, so the files are the same), starts the fake model, and runs the
prompt once:

- ``cli``: the real Copilot CLI, ``copilot -p PROMPT`` offline (:class:`~real_agents.agents.CopilotCli`);
  a JavaScript extension gets the SDK the CLI injects, a Python one runs through the exported
  launcher.
- ``host``: this host as a user runs it with a model, ``extensions trust`` then ``extensions chat
  --base-url ... --model test-model`` with the prompt on its standard input (typed once the
  extension has logged the scenario's ``prompt_after``, if it has one); a JavaScript extension
  gets the SDK the host pins (installed once into :func:`host_cache`).

Both runs are bounded and reaped by the tier's runner. The result holds the transcript (the tap
file, normalised with this run's folders and session id) and what reached the model, in the
parent's conversation and in each child's the scenario scripts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.compare import model_view
from conformance.scenarios import Scenario
from conformance.transcript import Transcript, build, read_tap, sdks
from extension_host.launch.node_sdk import SDK_PACKAGE, SDK_VERSION, ensure_sdk
from extension_host.project.paths import CACHE_ENV
from real_agents.agents import CopilotCli
from real_agents.programs import cache_root
from real_agents.runner import EXTENSIONS_BIN, AgentRun, Workspace

__all__ = ["EXTENSION", "RUN_TIMEOUT", "SIDES", "TAP_ENV", "Recording", "host_cache", "record"]

SIDES: Final = ("cli", "host")
EXTENSION: Final = "probe"
TAP_ENV: Final = "CONFORMANCE_TAP_DIR"
RUN_TIMEOUT: Final = 60.0
"""Seconds one run may take (a scenario takes a few)."""
PROMPT_WAIT: Final = 30.0
"""Seconds the model's answers (and the host's prompt) wait for what the scenario waits for
(``Scenario.prompt_after``)."""
_TAPS: Final = Path(__file__).parent


@dataclass(frozen=True)
class Recording:
    """One run of a scenario on one side."""

    side: str
    transcript: Transcript
    model: dict[str, Any]
    """What reached the model (:func:`conformance.compare.model_view`)."""
    run: AgentRun


def host_cache(copilot_prefix: Path) -> Path:
    """The host's cache folder for the suite, with the SDK the host pins already in it: linked
    from the real-agent tier's install when it is that version, else installed by the host."""
    cache = cache_root() / "conformance-host-cache"
    target = cache / "node-sdk" / SDK_VERSION
    tier_sdk = copilot_prefix / "node_modules" / "@github" / "copilot-sdk" / "package.json"
    if not (target / "installed.json").exists():
        if tier_sdk.exists() and json.loads(tier_sdk.read_text()).get("version") == SDK_VERSION:
            staging = target.with_name(f".{SDK_VERSION}-{os.getpid()}")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            (staging / "node_modules").symlink_to(copilot_prefix / "node_modules")
            (staging / "installed.json").write_text(json.dumps({"package": SDK_PACKAGE, "version": SDK_VERSION}))
            try:
                staging.rename(target)
            except OSError:  # another process linked it first
                shutil.rmtree(staging, ignore_errors=True)
        else:
            asyncio.run(ensure_sdk(cache, os.environ))
    return cache


def _write_project(workspace: Workspace, scenario: Scenario, language: str) -> None:
    for path, text in scenario.files.items():
        (workspace.project / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace.project / path).write_text(text)
    folder = workspace.project / ".github" / "extensions" / EXTENSION
    folder.mkdir(parents=True)
    (folder / f"extension.{language}").write_text(scenario.code(language))
    shutil.copy(_TAPS / f"tap.{language}", folder / f"tap.{language}")
    if language == "py":
        workspace.extensions("export", "copilot", EXTENSION)


@contextlib.contextmanager
def _typed(prompt: Path, scenario: Scenario, tap: Path) -> Iterator[None]:
    """Make ``prompt`` the chat's standard input for the scenario's prompt: a file holding it,
    or, with :attr:`~conformance.scenarios.Scenario.prompt_after`, a pipe it is written to once
    the tap shows the extension logged that (bounded: at :data:`PROMPT_WAIT` it is written anyway).
    """
    text = (scenario.prompt + "\n").encode()
    if scenario.prompt_after is None:
        prompt.write_bytes(text)
        yield
        return
    os.mkfifo(prompt)
    pipe = os.open(prompt, os.O_RDWR)  # a FIFO opened both ways does not wait for the reader
    done = threading.Event()

    def type_when_logged() -> None:
        deadline = time.monotonic() + PROMPT_WAIT
        while not done.is_set() and time.monotonic() < deadline and not _logged(tap, scenario.prompt_after):
            done.wait(0.05)
        if not done.is_set():
            os.write(pipe, text)
        os.close(pipe)  # the chat reads the end of its input once the prompt is read

    typist = threading.Thread(target=type_when_logged, name="typist", daemon=True)
    typist.start()
    try:
        yield
    finally:
        done.set()
        typist.join(timeout=PROMPT_WAIT)


def _logged(tap: Path, message: str | None) -> bool:
    """Whether the tap holds a ``session.log`` of ``message`` from the extension (a record being
    written counts once it is whole)."""
    try:
        messages = read_tap(tap) if tap.exists() else []
    except ValueError:
        return False
    return any(
        direction == "from extension"
        and isinstance(sent, dict)
        and sent.get("method") == "session.log"
        and (sent.get("params") or {}).get("message") == message
        for _, _, direction, sent in messages
    )


def record(scenario: Scenario, language: str, side: str, copilot_cli: CopilotCli, base: Path, cache: Path) -> Recording:
    """Run ``scenario`` with its extension in ``language`` on ``side`` (see the module's doc)."""
    workspace = Workspace.create(base / side)
    try:
        _write_project(workspace, scenario, language)
        taps = workspace.root / "tap"
        taps.mkdir()
        with copilot_cli.model(scenario.script, scenario.agents) as model:
            if scenario.prompt_after is not None:
                marker, tapped = scenario.prompt_after, taps / f"{EXTENSION}.jsonl"
                model.hold_answers_until(lambda: _logged(tapped, marker), PROMPT_WAIT)
            if side == "cli":
                run = copilot_cli.run(
                    workspace,
                    model,
                    scenario.prompt,
                    stop_hook_host=False,
                    timeout=RUN_TIMEOUT,
                    env={TAP_ENV: str(taps), **scenario.env},
                )
            else:
                workspace.extensions("trust")
                prompt = workspace.root / "prompt.txt"
                chat = [str(EXTENSIONS_BIN / "extensions"), "chat", "--base-url", f"{model.origin}/v1"]
                with _typed(prompt, scenario, taps / f"{EXTENSION}.jsonl"):
                    run = workspace.run(
                        [*chat, "--model", "test-model"],
                        env=workspace.env(**{TAP_ENV: str(taps), CACHE_ENV: str(cache)}, **scenario.env),
                        timeout=RUN_TIMEOUT,
                        stdin=prompt,
                    )
            requests = model.conversation_requests()
            children = {marker: model.conversation_requests(marker) for marker in scenario.agents}
    finally:
        workspace.remove()
    tap = taps / f"{EXTENSION}.jsonl"
    replacements = _replacements(workspace, tap, cache, copilot_cli)
    sdk = "; ".join(sdks(tap)) or "(the extension never started)"
    for original, placeholder in replacements.items():
        sdk = sdk.replace(original, placeholder)
    transcript = build(side, EXTENSION, sdk, tap, replacements)
    view = model_view(requests, scenario.model_tools, scenario.markers, replacements)
    for marker, child_requests in children.items():
        view.update(model_view(child_requests, scenario.model_tools, (), replacements, child=marker))
    return Recording(side, transcript, view, run)


def _replacements(workspace: Workspace, tap: Path, cache: Path, copilot_cli: CopilotCli) -> dict[str, str]:
    """This run's varying strings and their placeholders, longest first."""
    found = {
        str(copilot_cli.unpacked_files()): "<home>/.cache/copilot/pkg",
        str(workspace.project): "<project>",
        str(workspace.home): "<home>",
        str(cache): "<host-cache>",
        str(workspace.root): "<root>",
        str(EXTENSIONS_BIN.parent): "<venv>",
    }
    if tap.exists():
        for _, _, direction, message in read_tap(tap):
            params = message.get("params") if isinstance(message, dict) else None
            if direction == "from extension" and message.get("method") == "session.resume" and isinstance(params, dict):
                found[str(params.get("sessionId"))] = "<session>"
                break
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))
