"""Fixtures for the summarizer tests: the scripted model server, specs, agent dirs, and an
autouse guard that fails any network access other than loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitools.summarize.types import ModelCost, ModelSpec
from tests.unit.summarize.summarize_fakes import SECRET_KEY, FakeModelServer

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


# -- network guard ----------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connection or name lookup that is not for the loopback interface."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def _check(address: object) -> None:
        if isinstance(address, tuple) and address and str(address[0]) not in _LOOPBACK:
            raise ConnectionRefusedError(f"network access blocked in tests: {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        _check(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and str(host) not in _LOOPBACK:
            raise socket.gaierror(f"name lookup blocked in tests: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    # Proxies from the environment must not reroute requests to the local server.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PITOOLS_RETRY_BASE_DELAY", "0.001")


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


# -- specs ------------------------------------------------------------------------------


@pytest.fixture
def openai_spec(model_server: FakeModelServer) -> ModelSpec:
    return ModelSpec(
        provider="local",
        model_id="test-model",
        api="openai-completions",
        base_url=model_server.url + "/v1",
        api_key=SECRET_KEY,  # type: ignore[arg-type]
        context_window=32000,
        max_tokens=4096,
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    )


@pytest.fixture
def anthropic_spec(model_server: FakeModelServer) -> ModelSpec:
    return ModelSpec(
        provider="anthropic",
        model_id="claude-test",
        api="anthropic-messages",
        base_url=model_server.url,
        api_key=SECRET_KEY,  # type: ignore[arg-type]
        context_window=200000,
        max_tokens=64000,
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    )


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    """An empty Pi agent directory."""
    directory = tmp_path / "agent"
    directory.mkdir()
    return directory
