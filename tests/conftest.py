"""Suite-wide fixtures: no test may reach the network beyond this machine."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

# pytester runs pytest on throwaway projects (tests/testing/: the plugin as a user project uses it).
pytest_plugins = ["pytester"]

_real_connect = socket.socket.connect


def _is_loopback(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # AF_UNIX paths


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any connection to a non-loopback address (tests are offline by rule)."""

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise AssertionError(f"test tried to reach the network: {address!r}")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "/nonexistent/pitools-test-agent-dir")
    yield


@pytest.fixture
def cli_recursion_limit() -> Iterator[None]:
    """The recursion limit the CLI runs with, for a test on deeply nested values
    (``tests.support.cli_recursion_limit``; a module asks for it with ``pytestmark``)."""
    from tests.support import cli_recursion_limit

    with cli_recursion_limit():
        yield


@pytest.fixture
def every_file_is_big(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """``validate`` splits every file it may; the list records, per helper process asked for a
    file's parts (one per split at ``-j2``), whether it forked."""
    import pitools.core.validate.parts as parts
    import pitools.ops.parallel as parallel

    monkeypatch.setattr(parts, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(parts, "PART_BYTES", 512)  # many small parts: the queue gets exercised
    forks: list[bool] = []
    real_fork = parallel.fork_helper

    def counting_fork(*args: Any) -> Any:
        child = real_fork(*args)
        forks.append(child is not None)
        return child

    monkeypatch.setattr(parallel, "fork_helper", counting_fork)
    return forks


@pytest.fixture
def forked_helpers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every helper ``pitools.ops.parallel`` forks from here on, kept so a test can check that it
    was killed and reaped (``tests.support.assert_reaped``)."""
    from pitools.ops import parallel

    forked: list[Any] = []
    real_fork = parallel.fork_helper

    def keep(*args: Any) -> Any:
        child = real_fork(*args)
        forked.append(child)
        return child

    monkeypatch.setattr(parallel, "fork_helper", keep)
    return forked


@pytest.fixture
def record(request: pytest.FixtureRequest) -> Any:
    """Pi's whole recording of a golden case (``parametrize(..., indirect=LAZY)``: see tests/support.py)."""
    from tests.support import golden_recording

    case, krt = request.param
    return golden_recording(case, krt)


@pytest.fixture
def view(request: pytest.FixtureRequest) -> Any:
    """Pi's record of one leaf of a golden case (``parametrize(..., indirect=LAZY)``)."""
    from tests.support import recorded_view

    case, krt, leaf = request.param
    return recorded_view(case, krt, leaf)
