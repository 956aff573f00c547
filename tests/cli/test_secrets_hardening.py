"""``scan``/``redact`` against the leaks and slow shapes of issue 27, end to end.

Each case is a session whose secret the line prefilter used to drop (so ``redact`` wrote it out
and exited 0), or whose scan was quadratic. For each: ``scan`` reports it (exit 1), ``redact``
removes every character of it, and the redacted file scans clean.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

PASSWORD = "Zq8mW3pL9xR2"


def _session(tmp_path: Path, *contents: Any, raw: list[bytes] | None = None) -> Path:
    header = {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    lines = [orjson.dumps(header)]
    parent = None
    for i, content in enumerate(contents):
        entry = {
            "type": "message",
            "id": f"m{i}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "t",
                "toolName": "bash",
                "content": content,
                "timestamp": 1,
            },
        }
        lines.append(orjson.dumps(entry))
        parent = f"m{i}"
    lines.extend(raw or [])
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def _redact_leaves_nothing(run: Any, path: Path, secrets: list[str], *args: str) -> list[dict[str, Any]]:
    found = json.loads(run("scan", str(path), "--format", "json", *args, exit_code=1).stdout)["findings"]
    assert found
    out = path.with_name("clean.jsonl")
    run("redact", str(path), "-o", str(out), "--key", "k", *args)
    data = out.read_bytes()
    for secret in secrets:
        for form in (secret.encode(), orjson.dumps(secret)[1:-1], json.dumps(secret)[1:-1].encode()):
            assert form not in data, f"{secret!r} left in the redacted file"
    run("scan", str(out), *args, exit_code=0)
    return list(found)


LONG_NAMES = [
    f"…\nTF_VAR_database_master_password={PASSWORD}",
    f"/usr/local/lib/python3/site-packages/DB_PASSWORD='{PASSWORD}'",
    f"done\nexport SOME_VERY_LONG_APPLICATION_SPECIFIC_API_KEY={PASSWORD}\n",
    f"\tx_{'a' * 60}_client_secret: {PASSWORD}",
]


@pytest.mark.parametrize("text", LONG_NAMES)
def test_long_assignment_names(run: Any, tmp_path: Path, text: str) -> None:
    _redact_leaves_nothing(run, _session(tmp_path, _text(text)), [PASSWORD])


@pytest.mark.parametrize("key", ["passwd", "accessKey", "access_key", "db_passwd", "AWS_ACCESS_KEY", "refreshToken"])
def test_json_keys_the_detectors_know(run: Any, tmp_path: Path, key: str) -> None:
    entry = {
        "type": "custom",
        "customType": "cfg",
        "id": "c1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:02.000Z",
    }
    entry["data"] = {key: PASSWORD}
    path = _session(tmp_path, raw=[orjson.dumps(entry)])
    _redact_leaves_nothing(run, path, [PASSWORD])


B64 = base64.b64encode(f"DATABASE_PASSWORD={PASSWORD}\nmore text here\n".encode()).decode()


@pytest.mark.parametrize(
    "text",
    [
        "output:\n" + B64,
        "\t" + B64,
        "\r\n" + B64,
        "é" + B64,
        "x\n" + "\n".join(B64[i : i + 22] for i in range(0, len(B64), 22)),  # wrapped at an odd width
        "x\n" + "\r\n".join(B64[i : i + 20] for i in range(0, len(B64), 20)),
        B64 + "_suffix",
    ],
)
def test_base64_after_escapes_and_at_any_width(run: Any, tmp_path: Path, text: str) -> None:
    found = _redact_leaves_nothing(run, _session(tmp_path, _text(text)), [PASSWORD])
    assert any("(base64)" in f["field"] for f in found)


TOKENS = [
    "Xk4mPq9Zr7Lw2Nc8Vb5TgH3jK6sD1fA0qW9eR2tY",
    "pL0oK9iJ8uH7yG6tF5rD4eS3wA2qZ1xC0vB9nM8k",
    "Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx1Cv3Bn5Mq7We9R",
]


def test_random_tokens_on_consecutive_lines(run: Any, tmp_path: Path) -> None:
    found = _redact_leaves_nothing(run, _session(tmp_path, _text("\n".join(TOKENS))), TOKENS)
    assert len(found) == 3


def test_a_real_base64_dump_is_still_data(run: Any, tmp_path: Path) -> None:
    import random

    rng = random.Random(5)
    blob = base64.encodebytes(bytes(rng.randrange(256) for _ in range(3000))).decode()  # 76-wide lines
    run("scan", str(_session(tmp_path, _text(blob))), exit_code=0)


@pytest.mark.parametrize("value", ["Grüße-Pa55wört", "日本語パスワード99", "пароль-42"])
def test_non_ascii_value_written_with_escapes(run: Any, tmp_path: Path, value: str) -> None:
    path = _session(tmp_path, _text(f"the value is {value} here"))
    escaped = path.read_bytes().replace(value.encode(), json.dumps(value)[1:-1].encode())
    assert value.encode() not in escaped
    path.write_bytes(escaped)
    _redact_leaves_nothing(run, path, [value], "--value", value, "--no-entropy")


def test_overlapping_values_are_redacted_whole(run: Any, tmp_path: Path) -> None:
    a, b = "Xk4mPq9Zr7Lw", "r7Lw2Nc8Vb5T"
    path = _session(tmp_path, _text(f"keys: {a}2Nc8Vb5T and {a} alone and {b} alone"))
    _redact_leaves_nothing(run, path, [a, b, "2Nc8Vb5T", "Xk4mPq9Z"], "--value", a, "--value", b, "--no-entropy")


# -- time: linear in the input ------------------------------------------------------------------


def _cpu(run: Any, *args: str) -> float:
    started = time.process_time()
    run(*args, exit_code=None)
    return time.process_time() - started


@pytest.mark.slow
def test_scan_and_redact_stay_linear_on_hostile_shapes(run: Any, tmp_path: Path) -> None:
    """Twice the input costs about twice the time (quadratic code costs four times)."""
    import random

    rng = random.Random(1)

    def shapes(n: int) -> list[Any]:
        blob = base64.encodebytes(bytes(rng.randrange(256) for _ in range(n * 1000))).decode()
        repeated = " ".join(["Xk4mPq9Zr7Lw2Nc8Vb5TgH3jK6sD1fA0"] * (n * 100))
        b64_lines = "\n".join(base64.b64encode(b"password=%d" % i).decode() * 3 for i in range(n * 50))
        return [_text(blob), _text(repeated), _text(b64_lines)]

    times = []
    for n in (40, 160):
        path = _session(tmp_path, *shapes(n))
        out = tmp_path / f"r{n}.jsonl"
        times.append(_cpu(run, "scan", str(path)) + _cpu(run, "redact", str(path), "-o", str(out), "--key", "k"))
        run("scan", str(out), exit_code=0)
    # 4x the input: linear is ~4x, quadratic 16x; leave room for a noisy shared machine.
    assert times[1] < times[0] * 9 + 1.0, times
