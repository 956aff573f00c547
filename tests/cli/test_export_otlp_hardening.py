"""``export --format otlp`` against hostile endpoints and a missing optional extra (issue 27).

* credentials in ``--endpoint`` (``user:password@``, a query token) never reach stderr or stdout,
  whatever happens to the request;
* a malformed endpoint is a usage error (exit 2), not an internal error (exit 3);
* without ``pi-session-tools[otel]`` every output mode ends with the same one line and exit 1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.support import ROOT

SESSION = ROOT / "golden" / "gen-s0000_v3" / "session.jsonl"
Run = Callable[..., Result]
PASSWORD = "S3cretPassw0rd"
TOKEN = "tok9Zq8mW3pL9xR2vB7"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    "endpoint",
    [
        f"http://alice:{PASSWORD}@127.0.0.1:{{port}}/v1/traces",
        f"http://alice:{PASSWORD}@127.0.0.1:{{port}}",
        f"http://127.0.0.1:{{port}}/v1/traces?api_key={TOKEN}",
        f"https://{PASSWORD}@127.0.0.1:{{port}}/",
    ],
)
def test_endpoint_credentials_are_never_printed(run: Run, endpoint: str) -> None:
    pytest.importorskip("opentelemetry.proto")
    url = endpoint.format(port=_closed_port())
    result = run("export", str(SESSION), "--format", "otlp", "--endpoint", url, exit_code=1)
    assert result.stderr.startswith("pitools: could not send to http")
    for secret in (PASSWORD, TOKEN, "alice"):
        assert secret not in result.stderr
        assert secret not in result.stdout
    assert "127.0.0.1" in result.stderr


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://[::1",
        f"http://alice:{PASSWORD}@[::1",
        "http://h:99999999/v1/traces",
        f"http://alice:{PASSWORD}@h:port/",
        "ftp://collector:4318",
        "localhost:4318",
        "http://",
        "",
    ],
)
def test_malformed_endpoint_is_a_usage_error(run: Run, endpoint: str) -> None:
    result = run("export", str(SESSION), "--format", "otlp", "--endpoint", endpoint, exit_code=2)
    assert "--endpoint" in result.stderr
    assert PASSWORD not in result.stderr
    assert "Traceback" not in result.stderr


def test_display_url_masks_every_credential() -> None:
    from pitools.ops.otlp_send import display_url

    assert display_url(f"http://alice:{PASSWORD}@h:1/v1/traces") == "http://***@h:1/v1/traces"
    assert display_url(f"http://h/v1/traces?k={TOKEN}#x") == "http://h/v1/traces?…"
    assert display_url(f"http://a:{PASSWORD}@[::1") == "http://***@[::1"
    assert display_url(f"a:{PASSWORD}@b@h") == "***@h"
    assert display_url("http://h/\x1b[31mx") == "http://h/ [31mx"


#: Runs pitools with the OTLP packages (and protobuf under them) hidden, as on an install
#: without the optional extra.
_NO_EXTRA = """
import importlib.abc, sys
class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "google.protobuf" or name.startswith(("google.protobuf.", "opentelemetry")):
            raise ImportError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _Hide())
for name in list(sys.modules):
    if name.startswith(("google.protobuf", "opentelemetry")):
        del sys.modules[name]
sys.argv[0] = "pitools"
from pitools.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["-o", "{out}"],
        ["--all"],
        ["--all", "-o", "{out}"],
        ["--endpoint", "http://127.0.0.1:1"],
        ["--redact"],
        ["--redact", "--all", "-o", "{out}"],
    ],
)
def test_missing_extra_is_one_line_and_exit_1(tmp_path: Path, extra: list[str]) -> None:
    out = tmp_path / "traces.json"
    args = [a.format(out=out) for a in extra]
    env = {**os.environ, "NO_COLOR": "1", "PITOOLS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-c", _NO_EXTRA, "export", str(SESSION), "--format", "otlp", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        "pitools: OTLP export needs the OpenTelemetry protocol package: pip install 'pi-session-tools[otel]'"
    ]
    assert proc.stdout == ""
    assert not out.exists()
