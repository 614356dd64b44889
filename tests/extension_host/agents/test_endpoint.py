"""Where the agent sends its requests: options first, then the environment."""

from __future__ import annotations

import pytest

from extension_host.agents.endpoint import DEFAULT_BASE_URL, PLACEHOLDER_KEY, resolve_endpoint
from extension_host.agents.errors import AgentSetupError


def test_options_win_over_the_environment() -> None:
    env = {"OPENAI_BASE_URL": "http://env:1/v1", "OPENAI_MODEL": "env-model", "OPENAI_API_KEY": "env-key"}
    endpoint = resolve_endpoint("http://option:2/v1/", "option-model", "option-key", env)
    assert (endpoint.base_url, endpoint.model, endpoint.api_key) == ("http://option:2/v1", "option-model", "option-key")


def test_the_environment_fills_what_the_options_leave_out() -> None:
    env = {"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_MODEL": "llama3.1", "OPENAI_API_KEY": "k"}
    endpoint = resolve_endpoint(environ=env)
    assert (endpoint.base_url, endpoint.model, endpoint.api_key, endpoint.key_given) == (
        "http://localhost:11434/v1",
        "llama3.1",
        "k",
        True,
    )


def test_openai_without_a_key_is_refused_naming_the_variable() -> None:
    with pytest.raises(AgentSetupError, match=r"no API key for https://api\.openai\.com/v1: set OPENAI_API_KEY"):
        resolve_endpoint(environ={})
    assert resolve_endpoint(environ={"OPENAI_API_KEY": "k"}).base_url == DEFAULT_BASE_URL


def test_a_local_server_without_a_key_gets_a_placeholder() -> None:
    endpoint = resolve_endpoint("http://127.0.0.1:1234/v1", environ={})
    assert endpoint.api_key == PLACEHOLDER_KEY
    assert not endpoint.key_given
    assert endpoint.model is None


def test_a_base_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(AgentSetupError, match=r"'localhost:11434' is not an http\(s\) URL"):
        resolve_endpoint("localhost:11434", environ={})


def test_the_key_is_never_in_the_repr() -> None:
    assert "sk-secret" not in repr(resolve_endpoint("http://h/v1", api_key="sk-secret", environ={}))
