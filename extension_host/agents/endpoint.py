"""Where a Chat Completions agent sends its requests: base URL, model and API key.

Each comes from the option given, else the environment: ``OPENAI_BASE_URL`` (default
:data:`DEFAULT_BASE_URL`), ``OPENAI_MODEL`` (no default: :meth:`OpenAIChatAgent.prepare
<extension_host.agents.openai_chat.OpenAIChatAgent.prepare>` picks the endpoint's only model, or
says which it offers) and ``OPENAI_API_KEY``. A key is required for OpenAI's own API only: local
servers (Ollama, LM Studio, llama.cpp, vLLM) take any key or none, so they get a placeholder. The
key is never shown: not in ``repr``, not in errors. This module reads options and a mapping of
the environment; it does no I/O.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from .errors import AgentSetupError

__all__ = [
    "API_KEY_VARIABLE",
    "BASE_URL_VARIABLE",
    "DEFAULT_BASE_URL",
    "MODEL_VARIABLE",
    "PLACEHOLDER_KEY",
    "ChatEndpoint",
    "resolve_endpoint",
]

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
BASE_URL_VARIABLE: Final = "OPENAI_BASE_URL"
MODEL_VARIABLE: Final = "OPENAI_MODEL"
API_KEY_VARIABLE: Final = "OPENAI_API_KEY"
PLACEHOLDER_KEY: Final = "not-needed"
"""Sent to endpoints that need no key: the client library refuses to run without one."""
_KEY_REQUIRED_HOSTS: Final = frozenset({"api.openai.com"})


@dataclass(frozen=True, slots=True)
class ChatEndpoint:
    """A resolved endpoint: ``model`` may still be ``None`` (chosen once the endpoint is asked)."""

    base_url: str
    model: str | None
    api_key: str = field(repr=False)
    key_given: bool = True
    """False when ``api_key`` is the placeholder (no key was found)."""


def resolve_endpoint(
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ChatEndpoint:
    """The endpoint from the options, else the environment (see the module).

    Raises:
        AgentSetupError: the base URL is not an http(s) URL, or OpenAI's API has no key.
    """
    env = os.environ if environ is None else environ
    url = (base_url or env.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentSetupError(
            f"model endpoint {url!r} is not an http(s) URL; pass one such as http://localhost:11434/v1 "
            f"(--base-url or {BASE_URL_VARIABLE})"
        )
    key = api_key or env.get(API_KEY_VARIABLE) or None
    if key is None and parts.hostname in _KEY_REQUIRED_HOSTS:
        raise AgentSetupError(
            f"no API key for {url}: set {API_KEY_VARIABLE} (the key is read from the environment, "
            "never from the command line), or point --base-url at a local server such as Ollama"
        )
    chosen = (model or env.get(MODEL_VARIABLE) or "").strip() or None
    return ChatEndpoint(url, chosen, key or PLACEHOLDER_KEY, key_given=key is not None)
