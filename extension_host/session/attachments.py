"""Attachments of a prompt: each file or folder must exist inside the project or the session workspace.

A ``file`` or ``directory`` attachment (``{"type": "file", "path": ...}``, the path relative to
the first root or absolute) is checked and given the published SDK's shape: its absolute
``path`` and a ``displayName``. Attachments of other types pass as they are, except that one
naming a ``filePath`` (a selection) is checked the same way. This module reads the file system;
it does not queue or send anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from .errors import AttachmentError

__all__ = ["MAX_ATTACHMENTS", "check_attachments"]

MAX_ATTACHMENTS: Final = 64
"""Attachments one prompt may carry."""


def check_attachments(attachments: Sequence[Mapping[str, Any]], roots: Sequence[Path]) -> tuple[dict[str, Any], ...]:
    """The attachments, each file or folder checked to exist inside one of ``roots``.

    Raises:
        AttachmentError: one does not exist or lies outside every root (its path named), or
            there are more than :data:`MAX_ATTACHMENTS`.
    """
    if len(attachments) > MAX_ATTACHMENTS:
        raise AttachmentError(f"{len(attachments)} attachments", f"at most {MAX_ATTACHMENTS} may be sent")
    if not attachments:
        return ()  # most prompts: no root is resolved (a few system calls per path part)
    resolved_roots = [root.resolve() for root in roots]
    checked: list[dict[str, Any]] = []
    for attachment in attachments:
        raw = attachment.get("path", attachment.get("filePath"))
        if raw is None:
            checked.append(dict(attachment))
            continue
        if not isinstance(raw, str) or not raw:
            raise AttachmentError(str(raw), "the path must be a non-empty string")
        path = Path(raw)
        base = resolved_roots[0] if resolved_roots else Path.cwd()
        resolved = (path if path.is_absolute() else base / path).resolve()
        if not any(resolved.is_relative_to(root) for root in resolved_roots):
            allowed = " or ".join(str(root) for root in resolved_roots) or "nowhere"
            raise AttachmentError(raw, f"lies outside the project and the session workspace ({allowed})")
        if not resolved.exists():
            raise AttachmentError(raw, f"no such file ({resolved})")
        if attachment.get("type") in ("file", "directory"):
            display = attachment.get("displayName")
            checked.append(
                {**attachment, "path": str(resolved), "displayName": display if isinstance(display, str) else raw}
            )
        else:
            checked.append(dict(attachment))
    return tuple(checked)
