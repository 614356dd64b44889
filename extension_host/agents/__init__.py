"""Agents for real models, to pass as ``ExtensionHost(agent=...)``.

:class:`~extension_host.agents.openai_chat.OpenAIChatAgent` talks to any OpenAI-compatible Chat
Completions endpoint (OpenAI, Ollama, vLLM, the llama.cpp server, LM Studio...) through the
official ``openai`` client, an optional dependency (``pip install 'extension-host[openai]'``)
imported only when such an agent is made. The ``Agent`` protocol itself, and the scripted agent
of the tests, are in :mod:`extension_host.session.agents`; nothing here is imported by the host.
"""

from __future__ import annotations

from .errors import AgentError, AgentSetupError, ModelEndpointError
from .openai_chat import OpenAIChatAgent

__all__ = ["AgentError", "AgentSetupError", "ModelEndpointError", "OpenAIChatAgent"]
