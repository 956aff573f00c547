"""A scripted local model server for the summarizer tests.

``FakeModelServer`` is a threaded ``http.server`` on 127.0.0.1 (ephemeral port) that speaks
OpenAI Chat Completions (``POST .../chat/completions``), OpenAI Responses (``POST .../responses``)
and Anthropic Messages (``POST .../v1/messages``). Tests queue behaviours with ``server.script(...)``; each request
consumes one (a plain good summary when the queue is empty) and is recorded with its path,
headers and JSON body.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET_KEY = "sk-test-SECRET-0123456789abcdef"
SUMMARY_TEXT = "## Goal\nShip the feature."


# -- scripted server --------------------------------------------------------------------


@dataclass
class Step:
    """One scripted reply.

    kind: ``ok`` (a summary), ``length``, ``tool``, ``error`` (``status`` with ``body``),
    ``sleep`` (wait ``delay`` seconds, then ``ok``), ``drop`` (close without replying),
    ``raw`` (send ``status`` and ``body`` as they are).
    """

    kind: str = "ok"
    text: str = SUMMARY_TEXT
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: dict[str, Any] | None = None


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def _openai_reply(step: Step) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text}
    finish = "stop"
    if step.kind == "length":
        finish = "length"
    elif step.kind == "tool":
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
        }
        finish = "tool_calls"
    usage = step.usage or {
        "prompt_tokens": 1200,
        "completion_tokens": 300,
        "total_tokens": 1500,
        "prompt_tokens_details": {"cached_tokens": 200},
    }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def _anthropic_reply(step: Step) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": step.text}]
    stop = "end_turn"
    if step.kind == "length":
        stop = "max_tokens"
    elif step.kind == "tool":
        content = [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]
        stop = "tool_use"
    usage = step.usage or {
        "input_tokens": 1000,
        "output_tokens": 250,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "served-model",
        "content": content,
        "stop_reason": stop,
        "usage": usage,
    }


def _responses_reply(step: Step) -> dict[str, Any]:
    """A Responses API reply in its documented shape (a reasoning item, then the message)."""
    output: list[dict[str, Any]] = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": step.text, "annotations": []}],
        },
    ]
    status, incomplete = "completed", None
    if step.kind == "length":
        status, incomplete = "incomplete", {"reason": "max_output_tokens"}
    elif step.kind == "tool":
        output = [{"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read", "arguments": "{}"}]
    usage = step.usage or {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 200},
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 100},
        "total_tokens": 1500,
    }
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "incomplete_details": incomplete,
        "error": None,
        "model": "served-model",
        "output": output,
        "usage": usage,
    }


class FakeModelServer:
    """The scripted server; see the module docstring."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._script: list[Step] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with server._lock:
                    server.requests.append(
                        Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    step = server._script.pop(0) if server._script else Step()
                server._reply(self, step)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *steps: Step) -> None:
        with self._lock:
            self._script.extend(steps)

    def _reply(self, handler: BaseHTTPRequestHandler, step: Step) -> None:
        if step.kind == "drop":
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if step.kind == "sleep":
            time.sleep(step.delay)
        if step.kind in ("error", "raw"):
            status, payload = step.status, step.body
        else:
            status = 200
            if handler.path.endswith("/v1/messages"):
                payload = _anthropic_reply(step)
            elif handler.path.endswith("/responses"):
                payload = _responses_reply(step)
            else:
                payload = _openai_reply(step)
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            for name, value in step.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:
            pass  # the client gave up (timeout tests)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
