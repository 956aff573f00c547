"""``export --format otlp`` (to a file and to a local OTLP/HTTP receiver) and ``--format atif``.

Expected span and step values are read straight from the golden session's lines here (an
independent reading of the file), and the token totals are checked against Pi's own
getSessionStats rules (``core/views/stats.py``, itself checked against Pi 1.6.0).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

pytest.importorskip("opentelemetry.proto")

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
SESSION = GOLDEN / "gen-s0000_v3" / "session.jsonl"
Run = Callable[..., Result]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _branch(values: list[dict[str, Any]], leaf: str) -> list[dict[str, Any]]:
    by_id = {v["id"]: v for v in values[1:]}
    out = []
    current: dict[str, Any] | None = by_id[leaf]
    while current is not None:
        out.append(current)
        current = by_id.get(current.get("parentId"))  # type: ignore[arg-type]
    return out[::-1]


def _ms(iso: str) -> int:
    import datetime as dt

    return int(dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _attrs(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        which = kv.value.WhichOneof("value")
        if which == "array_value":
            out[kv.key] = [v.string_value for v in kv.value.array_value.values]
        else:
            out[kv.key] = getattr(kv.value, which)
    return out


class _Receiver(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, self.headers["Content-Type"], body))  # type: ignore[attr-defined]
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[str, str, bytes]]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", server.received  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def _sent_request(run: Run, receiver: tuple[str, list[Any]], *args: str) -> Any:
    url, received = receiver
    result = run("export", str(SESSION), "--format", "otlp", "--endpoint", url, *args)
    assert "sent" in result.stderr and result.stdout == ""
    assert len(received) == 1
    path, ctype, body = received[0]
    assert path == "/v1/traces" and ctype == "application/x-protobuf"
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    return request


def test_otlp_receiver_gets_the_default_branch_span_by_span(run: Run, receiver: Any) -> None:
    request = _sent_request(run, receiver)
    values = _lines(SESSION)
    header = values[0]
    leaf = values[-1]["id"]  # Pi's default leaf: the last entry
    branch = _branch(values, leaf)
    (rs,) = request.resource_spans
    (ss,) = rs.scope_spans
    assert ss.scope.name == "pitools"
    assert _attrs(ss.scope)["pitools.semconv.gen_ai.version"] == "0.1.0"
    spans = list(ss.spans)
    root = spans[0]
    assert root.name == "invoke_agent pi" and not root.parent_span_id
    assert len({s.trace_id for s in spans}) == 1 and len(root.trace_id) == 16
    assert root.start_time_unix_nano == _ms(branch[0]["timestamp"]) * 1_000_000
    assert root.end_time_unix_nano == _ms(branch[-1]["timestamp"]) * 1_000_000
    root_attrs = _attrs(root)
    assert root_attrs["gen_ai.conversation.id"] == header["id"]
    assert root_attrs["gen_ai.operation.name"] == "invoke_agent"

    chats = [s for s in spans if _attrs(s)["gen_ai.operation.name"] == "chat"]
    tools = [s for s in spans if _attrs(s)["gen_ai.operation.name"] == "execute_tool"]
    assistants = [e for e in branch if e["type"] == "message" and e["message"]["role"] == "assistant"]
    summaries = [e for e in branch if e["type"] in ("compaction", "branch_summary") and e.get("usage")]
    assert len(chats) == len(assistants) + len(summaries)
    by_entry = {_attrs(s)["pi.entry.id"]: s for s in chats}
    results = {
        e["message"]["toolCallId"]: e for e in branch if e["type"] == "message" and e["message"]["role"] == "toolResult"
    }
    expected_tools = 0
    for entry in assistants:
        msg = entry["message"]
        span = by_entry[entry["id"]]
        a = _attrs(span)
        assert span.parent_span_id == root.span_id
        assert span.kind == span.SPAN_KIND_CLIENT
        assert span.name == f"chat {msg['model']}"
        assert a["gen_ai.request.model"] == msg["model"]
        assert a["gen_ai.conversation.id"] == header["id"]
        assert a["pi.provider"] == msg["provider"]
        u = msg["usage"]
        # The convention's input count includes cache reads and writes; Pi's `input` does not.
        assert a["gen_ai.usage.input_tokens"] == u["input"] + u["cacheRead"] + u["cacheWrite"]
        assert a["gen_ai.usage.output_tokens"] == u["output"]
        assert a["gen_ai.usage.cache_read.input_tokens"] == u["cacheRead"]
        assert a["gen_ai.usage.cache_write.input_tokens"] == u["cacheWrite"]
        assert a["pi.usage.cost"] == pytest.approx(u["cost"]["total"])
        assert span.end_time_unix_nano == _ms(entry["timestamp"]) * 1_000_000
        assert span.start_time_unix_nano <= span.end_time_unix_nano
        assert a["pi.stop_reason"] == msg["stopReason"]
        is_error = msg["stopReason"] in ("error", "aborted")
        assert (span.status.code == span.status.STATUS_CODE_ERROR) == is_error
        for block in msg["content"]:
            if block["type"] != "toolCall":
                continue
            expected_tools += 1
            (tool,) = [t for t in tools if _attrs(t)["gen_ai.tool.call.id"] == block["id"]]
            ta = _attrs(tool)
            assert tool.name == f"execute_tool {block['name']}"
            assert ta["gen_ai.tool.name"] == block["name"]
            assert tool.parent_span_id == root.span_id
            assert tool.start_time_unix_nano == _ms(entry["timestamp"]) * 1_000_000
            result = results.get(block["id"])
            if result is None:
                assert ta["pi.tool.result_missing"] is True
            else:
                assert tool.end_time_unix_nano == _ms(result["timestamp"]) * 1_000_000
                failed = result["message"]["isError"] is True
                assert (tool.status.code == tool.status.STATUS_CODE_ERROR) == failed
    assert len(tools) == expected_tools > 0


def test_otlp_root_totals_match_pi_session_stats_of_the_branch(run: Run, receiver: Any) -> None:
    from pitools.core.session.load import load
    from pitools.core.views.stats import session_stats

    request = _sent_request(run, receiver)
    loaded = load(str(SESSION))
    stats = session_stats(loaded.index.get_branch(loaded.index.leaf_id)).totals
    a = _attrs(request.resource_spans[0].scope_spans[0].spans[0])
    assert a["gen_ai.usage.output_tokens"] == stats.output
    assert a["gen_ai.usage.input_tokens"] == stats.input + stats.cache_read + stats.cache_write
    assert a["gen_ai.usage.cache_read.input_tokens"] == stats.cache_read
    assert a["pi.usage.cost"] == pytest.approx(stats.cost)


def test_otlp_all_is_one_trace_per_leaf_and_stable(run: Run, receiver: Any) -> None:
    from pitools.core.session.load import load

    request = _sent_request(run, receiver, "--all")
    leaves = load(str(SESSION)).index.leaves()
    spans = request.resource_spans[0].scope_spans[0].spans
    roots = [s for s in spans if s.name == "invoke_agent pi"]
    assert len(roots) == len(leaves) == len({s.trace_id for s in spans}) > 1
    assert sorted(_attrs(r)["pi.leaf.id"] for r in roots) == sorted(leaves)
    # ids are derived from the session, so a second export is the same trace
    again = run("export", str(SESSION), "--format", "otlp", "--all")
    assert (
        json.loads(again.stdout)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] == roots[0].trace_id.hex()
    )


def test_otlp_json_file_is_protobuf_json_with_hex_ids(run: Run, tmp_path: Path) -> None:
    from google.protobuf import json_format

    out = tmp_path / "trace.json"
    run("export", str(SESSION), "--format", "otlp", "-o", str(out))
    data = json.loads(out.read_bytes())
    span = data["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16 and len(span["parentSpanId"]) == 16
    int(span["traceId"], 16)
    assert span["kind"] == 3  # SPAN_KIND_CLIENT as an integer, as OTLP/JSON requires
    # After turning the hex ids back into protobuf's base64, the document parses as the message.
    import base64

    def b64(obj: Any) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k in ("traceId", "spanId", "parentSpanId"):
                    obj[k] = base64.b64encode(bytes.fromhex(v)).decode()
                else:
                    b64(v)
        elif isinstance(obj, list):
            for v in obj:
                b64(v)

    b64(data)
    json_format.ParseDict(data, trace_service_pb2.ExportTraceServiceRequest())


def test_otlp_endpoint_refusal_is_exit_1(run: Run) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = run("export", str(SESSION), "--format", "otlp", "--endpoint", f"http://127.0.0.1:{port}", exit_code=1)
    assert result.stderr.startswith("pitools: could not send to http://127.0.0.1:")
    result = run("export", str(SESSION), "--format", "otlp", "--endpoint", "ftp://x", exit_code=2)
    assert "not an http(s) URL" in result.stderr


def test_endpoint_needs_otlp(run: Run) -> None:
    result = run("export", str(SESSION), "--format", "atif", "--endpoint", "http://127.0.0.1:1", exit_code=2)
    assert "--endpoint is only for --format otlp" in result.stderr


def test_otlp_missing_extra_is_one_line(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    for name in list(sys.modules):
        if name.startswith("opentelemetry"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # type: ignore[arg-type]
    result = run("export", str(SESSION), "--format", "otlp", exit_code=1)
    assert (
        result.stderr
        == "pitools: OTLP export needs the OpenTelemetry protocol package: pip install 'pi-session-tools[otel]'\n"
    )


# -- ATIF ---------------------------------------------------------------------------------------


def _validate_atif(data: dict[str, Any]) -> Any:
    atif = pytest.importorskip("atif")
    return atif.Trajectory.model_validate(data)


def test_atif_default_branch_validates_and_mirrors_the_file(run: Run) -> None:
    data = json.loads(run("export", str(SESSION), "--format", "atif").stdout)
    trajectory = _validate_atif(data)
    assert data["schema_version"] == "ATIF-v1.8"
    values = _lines(SESSION)
    branch = _branch(values, values[-1]["id"])
    assistants = [e for e in branch if e["type"] == "message" and e["message"]["role"] == "assistant"]
    agent_steps = [s for s in trajectory.steps if s.source == "agent"]
    assert len(agent_steps) == len(assistants)
    calls = 0
    for step, entry in zip(agent_steps, assistants, strict=True):
        msg = entry["message"]
        assert step.extra["pi_entry_id"] == entry["id"]
        assert step.model_name == msg["model"]
        u = msg["usage"]
        assert step.metrics.prompt_tokens == u["input"] + u["cacheRead"] + u["cacheWrite"]
        assert step.metrics.cached_tokens == u["cacheRead"]
        assert step.metrics.completion_tokens == u["output"]
        ids = [b["id"] for b in msg["content"] if b["type"] == "toolCall"]
        assert [c.tool_call_id for c in step.tool_calls or []] == ids
        calls += len(ids)
    assert calls > 0
    assert not any(s.is_copied_context for s in trajectory.steps)
    fm = trajectory.final_metrics
    assert fm.total_completion_tokens == sum(e["message"]["usage"]["output"] for e in assistants)


def test_atif_fork_marks_copied_history(run: Run, tmp_path: Path) -> None:
    # A real fork: `pitools fork` writes what Pi's /fork writes (parentSession = the source path).
    src = tmp_path / "src.jsonl"
    src.write_bytes(SESSION.read_bytes())
    values = _lines(SESSION)
    users = [e for e in values[1:] if e["type"] == "message" and e["message"]["role"] == "user"]
    out = tmp_path / "forked.jsonl"
    run("fork", str(src), "--at", users[3]["id"], "-o", str(out))
    data = json.loads(run("export", str(out), "--format", "atif").stdout)
    trajectory = _validate_atif(data)
    copied = [s for s in trajectory.steps if s.is_copied_context]
    assert copied and len(copied) == len(trajectory.steps)  # a fresh fork holds only copied history
    assert trajectory.final_metrics.total_prompt_tokens == 0
    assert "copied" in (trajectory.notes or "")


def test_atif_all_is_an_array_of_valid_trajectories(run: Run) -> None:
    from pitools.core.session.load import load

    data = json.loads(run("export", str(SESSION), "--format", "atif", "--all").stdout)
    assert isinstance(data, list)
    assert len(data) == len(load(str(SESSION)).index.leaves())
    for item in data:
        _validate_atif(item)
    assert len({item["trajectory_id"] for item in data}) == len(data)


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if (p / "session.jsonl").exists()))
def test_atif_and_otlp_on_every_golden_session(run: Run, case: str) -> None:
    """Every session Pi loads exports to a valid trajectory; broken ones fail with one line."""
    path = GOLDEN / case / "session.jsonl"
    result = run("export", str(path), "--format", "atif", "--all", exit_code=None)
    if result.exit_code == 0:
        for item in json.loads(result.stdout):
            _validate_atif(item)
        run("export", str(path), "--format", "otlp", "--all")
    else:
        assert result.exit_code == 1 and result.stderr.count("\n") == 1
    # The default branch alone: a trajectory, or one line when there is none (never a crash).
    single = run("export", str(path), "--format", "atif", exit_code=None)
    if single.exit_code == 0:
        _validate_atif(json.loads(single.stdout))
    else:
        assert single.exit_code == 1 and single.stderr.count("\n") == 1


def test_atif_of_an_empty_default_branch_says_so(run: Run) -> None:
    # The file's last line is not an entry, so Pi's default leaf names nothing (this crashed).
    result = run("export", str(GOLDEN / "nonobject-last-line" / "session.jsonl"), "--format", "atif", exit_code=1)
    assert "no branch to export" in result.stderr and result.stdout == ""


class _Refusing(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/partial":
            answer = trace_service_pb2.ExportTraceServiceResponse()
            answer.partial_success.rejected_spans = 3
            answer.partial_success.error_message = "too old"
            body, code = answer.SerializeToString(), 200
        else:
            body, code = b"quota exceeded", 429
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_otlp_collector_refusals_are_exit_1(run: Run) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        partial = run("export", str(SESSION), "--format", "otlp", "--endpoint", f"{base}/partial", exit_code=1)
        assert "the collector rejected 3 span(s): too old" in partial.stderr
        refused = run("export", str(SESSION), "--format", "otlp", "--endpoint", f"{base}/v1/traces", exit_code=1)
        assert "answered HTTP 429: quota exceeded" in refused.stderr
    finally:
        server.shutdown()
        server.server_close()


def test_export_data_never_overwrites(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    out.write_text("keep")
    result = run("export", str(SESSION), "--format", "atif", "-o", str(out), exit_code=1)
    assert "already exists" in result.stderr and out.read_text() == "keep"
