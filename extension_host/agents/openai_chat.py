"""An agent for OpenAI-compatible Chat Completions endpoints, through the official ``openai`` client.

Each step of a turn is one ``chat.completions`` request: the model context as messages
(:mod:`.chat_messages`), the offered tools with their JSON Schemas, and, when streaming (the
default), the text handed to the request's ``on_delta`` as it arrives (the host makes
``assistant.message_delta`` events of it). The reply carries the tool calls the model asked
for and the call's usage (``assistant.usage``); :meth:`OpenAIChatAgent.usage` is the sum
(``session.usage.getMetrics``), :meth:`OpenAIChatAgent.models` the endpoint's model list.

A request answered 429 or 5xx is tried again, at most :data:`MAX_RETRIES` times, after
:data:`RETRY_BASE_DELAY` doubling up to :data:`RETRY_MAX_DELAY` (or the ``Retry-After`` the
endpoint asks for, within that bound); never once text has been streamed, which would show twice.
Every other failure is one :class:`~.errors.ModelEndpointError` line naming the endpoint and what
to do: a wrong URL, a refused key, an unknown model, a model without tool calling.

The ``openai`` package is imported when an agent is made, never by the host (``pip install
'extension-host[openai]'``; without it :class:`~.errors.AgentSetupError` says so). This module
does not know events, hooks or extensions.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..session.agents import AgentReply, AgentRequest
from ..session.model_context import ToolCall
from .chat_messages import chat_messages, chat_tools, parse_arguments
from .endpoint import API_KEY_VARIABLE, MODEL_VARIABLE, ChatEndpoint, resolve_endpoint
from .errors import AgentSetupError, ModelEndpointError
from .usage import CallUsage, UsageMeter

if TYPE_CHECKING:
    import openai

__all__ = [
    "INSTALL_HINT",
    "MAX_LISTED_MODELS",
    "MAX_RETRIES",
    "REQUEST_TIMEOUT",
    "RETRY_BASE_DELAY",
    "RETRY_MAX_DELAY",
    "OpenAIChatAgent",
]

MAX_RETRIES: Final = 4
"""Tries after the first for a request answered 429 or 5xx."""
RETRY_BASE_DELAY: Final = 0.5
"""Seconds before the first retry; each next one waits twice as long."""
RETRY_MAX_DELAY: Final = 8.0
"""The longest wait before a retry, ``Retry-After`` included."""
REQUEST_TIMEOUT: Final = 600.0
"""Seconds one request may take (a local model on a CPU can be slow)."""
MAX_LISTED_MODELS: Final = 500
"""Models kept from the endpoint's list."""
INSTALL_HINT: Final = "pip install 'extension-host[openai]'"
_MESSAGE_CHARS: Final = 300
"""What an error keeps of the endpoint's own message."""


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise AgentSetupError(f"the OpenAI-compatible agent needs the openai package: {INSTALL_HINT}") from None
    return openai


class OpenAIChatAgent:
    """An :class:`~extension_host.session.agents.Agent` for a Chat Completions endpoint.

    ``model``, ``base_url`` and ``api_key`` default to ``OPENAI_MODEL``, ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY`` (see :mod:`.endpoint`). ``stream=False`` asks for whole answers (for
    servers whose streamed tool calls are broken). ``retry_delay`` is the first retry's wait;
    ``on_retry`` is told of each retry in one line (``extensions chat`` prints it).

    Raises:
        AgentSetupError: no ``openai`` package, a base URL that is not http(s), or no key for
            OpenAI's API.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        retries: int = MAX_RETRIES,
        retry_delay: float = RETRY_BASE_DELAY,
        timeout: float = REQUEST_TIMEOUT,
        environ: Mapping[str, str] | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        module = _openai()
        self.on_retry = on_retry
        self.endpoint: ChatEndpoint = resolve_endpoint(base_url, model, api_key, environ)
        self.model: str | None = self.endpoint.model
        """The model the next request names (``None`` until :meth:`prepare` chose one)."""
        self.stream = stream
        self._retries = max(0, min(retries, MAX_RETRIES))
        self._retry_delay = retry_delay
        self._timeout = timeout
        # The client's own retries are off: these are counted and bounded here.
        self._client: openai.AsyncOpenAI = module.AsyncOpenAI(
            api_key=self.endpoint.api_key, base_url=self.endpoint.base_url, max_retries=0, timeout=timeout
        )
        self._meter = UsageMeter()
        self._meter.current_model = self.model
        self._copy = False
        """A :meth:`with_model` copy: the connection is the original's to close."""
        self._models: list[str] | None = None

    @property
    def base_url(self) -> str:
        """The endpoint's base URL."""
        return self.endpoint.base_url

    async def prepare(self) -> None:
        """Ask the endpoint for its models, and choose the model if none was given.

        Raises:
            ModelEndpointError: the endpoint cannot be reached or refuses the key.
            AgentSetupError: no model was given and the endpoint offers several (or none).
        """
        await self.refresh_models()
        if self.model is not None:
            return
        offered = self._models or []
        if len(offered) == 1:
            self.select_model(offered[0])
            return
        listed = ", ".join(offered[:8]) + (", …" if len(offered) > 8 else "")
        raise AgentSetupError(
            f"no model chosen for {self.base_url}: pass --model or set {MODEL_VARIABLE}"
            + (f" (it offers: {listed})" if offered else " (it lists no models)")
        )

    async def refresh_models(self) -> list[str] | None:
        """Read the endpoint's model list (``None``: it has none to give).

        Raises:
            ModelEndpointError: the endpoint cannot be reached or refuses the key.
        """
        openai = _openai()
        ids: list[str] = []
        try:
            async for model in self._client.models.list():
                ids.append(model.id)
                if len(ids) >= MAX_LISTED_MODELS:
                    break
        except (openai.NotFoundError, openai.UnprocessableEntityError):
            return None  # the server answers chat but lists nothing (some proxies)
        except openai.APIError as exc:
            raise self._error(exc, tools_sent=False) from None
        self._models = ids
        return ids

    # -- the Agent protocol -------------------------------------------------------------

    async def respond(self, request: AgentRequest) -> AgentReply:
        """One model call for this step (see the module)."""
        if self.model is None:
            await self.prepare()
        assert self.model is not None
        if request.step == 0:
            self._meter.prompt()
        arguments: dict[str, Any] = {"model": self.model, "messages": chat_messages(request.messages)}
        tools = chat_tools(request.tools)
        if tools:
            arguments["tools"] = tools
        openai = _openai()
        streamed = [False]
        for attempt in range(self._retries + 1):
            try:
                if self.stream:
                    return await self._streamed(arguments, request, streamed)
                return await self._whole(arguments)
            except openai.APIStatusError as exc:
                retryable = exc.status_code == 429 or exc.status_code >= 500
                if not retryable or attempt == self._retries or streamed[0]:
                    raise self._error(exc, tools_sent=bool(tools), retried=attempt) from None
                delay = self._delay(attempt, exc)
                if self.on_retry is not None:
                    self.on_retry(
                        f"the model endpoint answered {exc.status_code}; "
                        f"trying again in {delay:.3g} s (retry {attempt + 1} of {self._retries})"
                    )
                await asyncio.sleep(delay)
            except openai.APIError as exc:
                raise self._error(exc, tools_sent=bool(tools)) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def models(self) -> list[dict[str, Any]]:
        """The endpoint's models as the published SDK's ``Model`` items (the chosen one alone
        when the endpoint has no list, or it was not read yet)."""
        ids = list(self._models or ([self.model] if self.model else []))
        return [{"id": model, "name": model, "capabilities": {}} for model in ids]

    def usage(self) -> dict[str, Any]:
        """The tokens every call reported, as the published SDK's ``UsageGetMetricsResult``."""
        return self._meter.metrics()

    def select_model(self, model_id: str) -> None:
        """Name ``model_id`` in the next requests.

        Raises:
            ValueError: the endpoint listed its models and this is not one of them.
        """
        if self._models and model_id not in self._models:
            raise ValueError(f"model {model_id!r} is not offered by {self.base_url}; it offers {len(self._models)}")
        self.model = model_id
        self._meter.current_model = model_id

    def with_model(self, model_id: str) -> OpenAIChatAgent:
        """A copy that names ``model_id`` in its requests (a subagent's model); it shares this
        agent's connection and usage count.

        Raises:
            ValueError: the endpoint listed its models and this is not one of them.
        """
        if self._models and model_id not in self._models:
            raise ValueError(f"model {model_id!r} is not offered by {self.base_url}; it offers {len(self._models)}")
        clone = copy.copy(self)
        clone.model = model_id
        clone._copy = True
        return clone

    async def close(self) -> None:
        """Close the HTTP connections (a :meth:`with_model` copy leaves them to the original)."""
        if not self._copy:
            await self._client.close()

    # -- one request --------------------------------------------------------------------

    async def _whole(self, arguments: dict[str, Any]) -> AgentReply:
        started = time.monotonic()
        completion = await self._client.chat.completions.create(**arguments)
        choice = completion.choices[0] if completion.choices else None
        text = (choice.message.content if choice else None) or ""
        calls: list[ToolCall] = []
        for call in (choice.message.tool_calls if choice else None) or ():
            function = getattr(call, "function", None)
            if function is not None and function.name:
                calls.append(ToolCall(function.name, parse_arguments(function.arguments)))
        usage = self._call_usage(completion.usage, started, None, choice.finish_reason if choice else None)
        return self._reply(text, calls, usage, completion.id)

    async def _streamed(self, arguments: dict[str, Any], request: AgentRequest, streamed: list[bool]) -> AgentReply:
        started = time.monotonic()
        first: float | None = None
        parts: list[str] = []
        slots: dict[int, list[str]] = {}  # index -> [name, arguments text]
        usage: Any = None
        finish: str | None = None
        call_id: str | None = None
        stream = await self._client.chat.completions.create(
            **arguments, stream=True, stream_options={"include_usage": True}
        )
        try:
            async for chunk in stream:
                call_id = call_id or chunk.id or None
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        first = first or time.monotonic()
                        parts.append(delta.content)
                        streamed[0] = True
                        if request.on_delta is not None:
                            request.on_delta(delta.content)
                    for piece in delta.tool_calls or ():
                        first = first or time.monotonic()
                        slot = slots.setdefault(piece.index, ["", ""])
                        if piece.function is not None:
                            slot[0] += piece.function.name or ""
                            slot[1] += piece.function.arguments or ""
                    finish = choice.finish_reason or finish
        finally:
            await stream.close()
        calls = [ToolCall(name, parse_arguments(text)) for _, (name, text) in sorted(slots.items()) if name]
        return self._reply("".join(parts), calls, self._call_usage(usage, started, first, finish), call_id)

    def _reply(self, text: str, calls: list[ToolCall], usage: CallUsage, call_id: str | None) -> AgentReply:
        if call_id:
            usage = CallUsage(**{**_fields(usage), "call_id": call_id})
        return AgentReply(text, tuple(calls), self.model, usage=self._meter.record(usage))

    def _call_usage(self, usage: Any, started: float, first: float | None, finish: str | None) -> CallUsage:
        assert self.model is not None
        now = time.monotonic()
        prompt_details = getattr(usage, "prompt_tokens_details", None)
        completion_details = getattr(usage, "completion_tokens_details", None)
        return CallUsage(
            model=self.model,
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            cache_read_tokens=getattr(prompt_details, "cached_tokens", None),
            reasoning_tokens=getattr(completion_details, "reasoning_tokens", None),
            duration_ms=(now - started) * 1000,
            time_to_first_token_ms=None if first is None else (first - started) * 1000,
            finish_reason=finish,
        )

    def _delay(self, attempt: int, exc: openai.APIStatusError) -> float:
        asked = exc.response.headers.get("retry-after")
        try:
            wait = float(asked) if asked is not None else self._retry_delay * 2**attempt
        except ValueError:
            wait = self._retry_delay * 2**attempt  # an HTTP date: not worth parsing for a bounded wait
        return max(0.0, min(wait, RETRY_MAX_DELAY))

    def _error(self, exc: openai.APIError, *, tools_sent: bool, retried: int = 0) -> ModelEndpointError:
        openai = _openai()
        url, model = self.base_url, self.model
        said = _endpoint_message(exc)
        if isinstance(exc, openai.APITimeoutError):
            return ModelEndpointError(
                f"the model endpoint {url} did not answer within {self._timeout:g} s; try again, or use a faster model"
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            why = f"{type(cause).__name__}: {cause}" if cause else said
            return ModelEndpointError(
                f"cannot reach the model endpoint {url} ({_one_line(why)}); "
                "check --base-url or OPENAI_BASE_URL, and that the server is running"
            )
        status = getattr(exc, "status_code", None)
        if status in (401, 403):
            return ModelEndpointError(
                f"the model endpoint {url} refused the API key ({status}: {said}); "
                f"set {API_KEY_VARIABLE} to a key it accepts",
                status,
            )
        if tools_sent and status in (400, 404, 422, 500) and "tool" in said.lower():
            return ModelEndpointError(
                f"model {model!r} at {url} does not support tool calling ({status}: {said}); "
                "choose a model that does (--model)",
                status,
            )
        if status == 404:
            return ModelEndpointError(
                f"{url} has no model {model!r}, or is not a Chat Completions endpoint (404: {said}); "
                "check --model, and that the base URL ends with the API's version, such as /v1",
                status,
            )
        if status == 429 or (status is not None and status >= 500):
            what = "is rate limiting" if status == 429 else "failed"
            tries = f", still after {retried} retries" if retried else ""
            return ModelEndpointError(
                f"the model endpoint {url} {what} ({status}: {said}){tries}; try again later", status
            )
        return ModelEndpointError(f"the model endpoint {url} refused the request ({status}: {said})", status)


def _fields(usage: CallUsage) -> dict[str, Any]:
    return {name: getattr(usage, name) for name in CallUsage.__slots__}


def _endpoint_message(exc: Any) -> str:
    """The endpoint's own words: ``{"error": {"message": ...}}`` (OpenAI), ``{"error": "..."}``
    (Ollama), else the client's message."""
    body = getattr(exc, "body", None)
    if isinstance(body, str) and body.strip():
        return _one_line(body)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, Mapping) else inner
        if isinstance(message, str) and message:
            return _one_line(message)
    return _one_line(str(getattr(exc, "message", None) or exc))


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MESSAGE_CHARS else flat[: _MESSAGE_CHARS - 1] + "…"
