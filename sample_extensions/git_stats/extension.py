"""git_stats: one tool that tells the agent where the project's git work tree stands.

The logic lives in ``git_stats.py`` next to this file; this file only declares the tool and
joins the session.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

# This folder is sys.path[0] when the host runs the extension, so the sibling module imports.
from git_stats import DEFAULT_TIMEOUT, GitStatsError, collect_git_stats

from sdk_extension import ToolResult, join_session, tool


@tool(
    description=(
        "Report the project's git state as JSON: current branch (or detached HEAD sha), upstream "
        "with ahead/behind counts, counts of staged, unstaged, untracked and conflicted files, "
        "lines added/removed per file (staged and unstaged separately, binary files marked) and "
        "totals. Read-only; cheaper and more precise than running git status and git diff."
    )
)
def git_stats(
    include_files: Annotated[bool, "List the changed files with their line counts"] = True,
    max_files: Annotated[int, "At most this many files in the list (totals always cover all files)"] = 50,
) -> dict[str, Any] | ToolResult:
    """Report the git state of the working directory (the project root)."""
    try:
        return collect_git_stats(os.getcwd(), include_files=include_files, max_files=max_files, timeout=DEFAULT_TIMEOUT)
    except GitStatsError as exc:
        return ToolResult(f"git_stats failed: {exc}", "failure", error=str(exc))


if __name__ == "__main__":
    session = join_session(tools=[git_stats])
    session.log("git_stats ready", ephemeral=True)
