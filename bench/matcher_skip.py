"""What a pre+post hook whose matcher does not match the tool costs a tool call.

Two hosts run at once, each with the built-in ``async`` tool ``builtin_echo`` of
:mod:`bench.host` (no worker thread, so whole calls are short and steady): one with no extensions,
one with an extension whose ``on_pre_tool_use`` and ``on_post_tool_use`` are limited to
``bash`` and ``run_*``. Blocks of calls alternate A B / B A; each side's figure is the median of
its block means. Run: ``python -m bench.matcher_skip [blocks] [calls per block]``.

On a loaded machine whole calls (~17 us) can still vary by more than the 5 us target, so the
script also times the only step the two hosts do differently, the dispatcher's two chain look-ups
for the tool, in a tight loop (the runner is private: reaching it is the point here).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import textwrap
import timeit
from contextlib import AsyncExitStack
from pathlib import Path

from bench.host import builtin_echo, interleaved_builtin_calls
from extension_host import ExtensionHost

__all__ = ["GUARD", "main", "measure"]

GUARD = """
from sdk_extension import join_session

def guard(input, invocation):
    return {"permission_decision": "deny"}

join_session(
    hooks={"on_pre_tool_use": guard, "on_post_tool_use": guard},
    hook_matchers={"on_pre_tool_use": ["bash", "run_*"], "on_post_tool_use": ["bash", "run_*"]},
)
"""


def _lookups(host: ExtensionHost, rounds: int = 200_000) -> float:
    """Seconds of the dispatcher's two chain look-ups for ``builtin_echo`` (best of five)."""
    hooks = host._hooks

    def both() -> None:
        hooks.chain_for("on_pre_tool_use", "builtin_echo")
        hooks.chain_for("on_post_tool_use", "builtin_echo")

    return min(timeit.repeat(both, number=rounds, repeat=5)) / rounds


async def measure(root: Path, blocks: int, block_calls: int) -> tuple[float, float, float, float]:
    """Seconds per call, then per look-up pair: no hook at all, then a non-matching pre+post
    hook in another extension."""
    async with AsyncExitStack() as stack:
        hosts = []
        for name, with_guard in (("plain", False), ("guarded", True)):
            project, home = root / name, root / f"{name}-home"
            home.mkdir(parents=True)
            if with_guard:
                folder = project / ".github" / "extensions" / "guard"
                folder.mkdir(parents=True)
                (folder / "extension.py").write_text(textwrap.dedent(GUARD), encoding="utf-8")
            else:
                project.mkdir(parents=True)
            host = ExtensionHost(project, home, trust=True, builtin_tools=[builtin_echo], watch=False)
            await stack.enter_async_context(host)
            hosts.append(host)
        assert hosts[1].extension("guard").status == "running", hosts[1].extension("guard").error
        assert hosts[1].hook_chain("on_pre_tool_use") == ["project:guard"]

        plain, skipped = await interleaved_builtin_calls(hosts[0], hosts[1], blocks, block_calls)
        assert not hosts[1].events.history("hook.start"), "a hook was called: the matcher did not skip it"
        lookups = (_lookups(hosts[0]), _lookups(hosts[1]))
    return plain, skipped, *lookups


def main(argv: list[str]) -> None:
    """Print both figures and their difference, in microseconds."""
    blocks = int(argv[0]) if argv else 41
    block_calls = int(argv[1]) if len(argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as temporary:
        plain, skipped, plain_lookup, skipped_lookup = asyncio.run(measure(Path(temporary), blocks, block_calls))
    print(f"no hook at all:                  {plain * 1e6:7.2f} us per call, {plain_lookup * 1e6:.3f} us in look-ups")
    print(
        f"pre+post hook, matcher no match: {skipped * 1e6:7.2f} us per call, {skipped_lookup * 1e6:.3f} us in look-ups"
    )
    print(
        f"difference:                      {(skipped - plain) * 1e6:+7.2f} us per call, "
        f"{(skipped_lookup - plain_lookup) * 1e6:+.3f} us in look-ups"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
