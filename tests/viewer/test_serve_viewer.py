"""``pitools serve``: a growing session sends only its new entries; the browser is opened on the
URL with the token (``webbrowser.open`` replaced, no real browser) unless ``--no-browser``."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests import support
from tests.browser import CHROMIUM
from tests.support import PITOOLS

CASE = "seed-running-example"


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copyfile(support.golden_session(CASE), folder / "S1.jsonl")
    return folder


@pytest.fixture
def server(archive: Path) -> Iterator[Any]:
    with support.serving(archive) as app:
        yield app


def fetch(app: Any, path: str) -> bytes:
    req = urllib.request.Request(app.url(path))
    req.add_header("Cookie", f"{app.cookie}={app.token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=30) as resp:
        body: bytes = resp.read()
        return body


def appended(n: int, parent: str) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        eid = f"NEW{i}"
        out.append(
            {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": f"2026-07-29T10:00:0{i}.000Z",
                "message": {"role": "user", "content": f"appended **{i}**", "timestamp": 2},
            }
        )
        parent = eid
    return out


def _data(app: Any, prefix: dict[str, Any] | None = None, last: str = "") -> tuple[dict[str, Any], list[bytes]]:
    """The data endpoint's head and entry lines (for a page holding ``prefix``; ``last``, the
    id of its last entry, is what the page sent before the server compared bytes)."""
    query = f"?have={prefix['have']}&bytes={prefix['bytes']}&sha={prefix['sha']}&last={last}" if prefix else ""
    body = fetch(app, f"/session/S1/data{query}")
    assert body.endswith(b"\n")  # the head too ends with one, when no entry follows
    head, *rest = body[:-1].split(b"\n")
    return json.loads(head), rest


def test_the_data_endpoint_sends_only_what_was_appended(server: Any, archive: Path) -> None:
    session = archive / "S1.jsonl"
    lines = session.read_bytes().splitlines()
    have = len(lines) - 1  # entries: the header is not one
    last = json.loads(lines[-1])["id"]
    info, rest = _data(server)
    prefix = info["prefix"]
    assert info["from"] == 0 and len(rest) == have
    assert prefix["have"] == have and prefix["bytes"] == session.stat().st_size - 1  # its newline left out
    with open(session, "a", encoding="utf-8") as f:
        for e in appended(2, last):
            f.write(json.dumps(e) + "\n")
    info, rest = _data(server, prefix)
    assert info["from"] == have
    assert [json.loads(r)["id"] for r in rest] == ["NEW0", "NEW1"]
    assert len(info["meta"]["ids"]) == have + 2 and info["meta"]["ids"][-2:] == ["NEW0", "NEW1"]
    assert info["stamp"] == server.stamp(str(session))
    assert info["prefix"]["have"] == have + 2 and info["prefix"]["bytes"] == session.stat().st_size - 1
    # A page holding other bytes (the file was rewritten) gets everything again.
    info, rest = _data(server, {**prefix, "sha": "0" * 64})
    assert info["from"] == 0 and len(rest) == have + 2
    info, rest = _data(server)
    assert info["from"] == 0 and len(rest) == have + 2
    # Whatever a client sends as the prefix is only compared, never trusted.
    held = info["prefix"]
    for odd in ("%C3%A9", "%00", "x" * 200):
        body = fetch(server, f"/session/S1/data?have={held['have']}&bytes={held['bytes']}&sha={odd}")
        assert json.loads(body.split(b"\n", 1)[0])["from"] == 0


def test_a_change_that_adds_no_entry_sends_the_head_and_its_newline(server: Any, archive: Path) -> None:
    """Issue 36 item 5: after a ``touch`` the answer was the head with no newline, which the page
    could not split: it stopped updating and asked for the whole session every second."""
    session = archive / "S1.jsonl"
    info, _ = _data(server)
    os.utime(session, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    body = fetch(server, "/session/S1/data?have={have}&bytes={bytes}&sha={sha}".format(**info["prefix"]))
    head, sep, rest = body.partition(b"\n")
    assert sep == b"\n" and rest == b""
    assert json.loads(head)["from"] == info["prefix"]["have"]
    assert json.loads(head)["stamp"] == server.stamp(str(session)) != info["stamp"]


def test_an_in_place_rewrite_with_the_same_ids_sends_everything(server: Any, archive: Path) -> None:
    """Issue 36 item 6: ``redact --in-place`` keeps the entry count and the last id; the page must
    not keep the text it holds (the server decides by the bytes, not by count and id)."""
    session = archive / "S1.jsonl"
    text = session.read_text(encoding="utf-8")
    info, _ = _data(server)
    word = "JWT"
    assert word in text
    session.write_text(text.replace(word, "[REDACTED]"), encoding="utf-8")  # same lines, same ids
    last = json.loads(text.splitlines()[-1])["id"]
    with open(session, "a", encoding="utf-8") as f:
        f.write(json.dumps(appended(1, last)[0]) + "\n")
    got, rest = _data(server, info["prefix"], last)
    assert got["from"] == 0 and len(rest) == info["prefix"]["have"] + 1
    assert not any(word.encode() in r for r in rest)


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_an_open_page_takes_only_the_new_entries(server: Any, archive: Path) -> None:
    from tests.browser import Browser

    session = archive / "S1.jsonl"
    lines = session.read_bytes().splitlines()
    have, last = len(lines) - 1, json.loads(lines[-1])["id"]
    with Browser() as b:
        b.open(server.url(f"/session/S1?token={server.token}"))
        before = b.state()
        with open(session, "a", encoding="utf-8") as f:
            for e in appended(3, last):
                f.write(json.dumps(e) + "\n")
        started = time.monotonic()
        b.wait_for("document.querySelector('#transcript [data-entry-id=\"NEW2\"]') !== null", timeout=15)
        assert time.monotonic() - started < 5
        assert b.eval("document.documentElement.dataset.updateFrom") == str(have)  # only the 3 new ones came
        after = b.state()
        assert after["transcript"] == before["transcript"] + ["NEW0", "NEW1", "NEW2"]
        assert sorted(after["tree"]) == sorted(before["tree"] + ["NEW0", "NEW1", "NEW2"])
        assert {"NEW0", "NEW1", "NEW2"} <= set(after["inContext"])
        assert "appended 2" in after["text"] and "**" not in after["text"]  # Markdown, drawn


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_an_open_page_follows_a_touch_then_an_in_place_rewrite(server: Any, archive: Path) -> None:
    """Issue 36 items 5 and 6 in the page: after a change that adds no entry it keeps following
    the file, and after an in-place rewrite (same ids) it shows the new text, not the old."""
    from tests.browser import Browser

    session = archive / "S1.jsonl"
    text = session.read_text(encoding="utf-8")
    last = json.loads(text.splitlines()[-1])["id"]
    with Browser() as b:
        b.open(server.url(f"/session/S1?token={server.token}"))
        assert "JWT" in b.state()["text"]
        os.utime(session, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
        b.wait_for("document.documentElement.dataset.updated !== undefined", timeout=15)
        assert b.eval("document.documentElement.dataset.updateFrom") == str(len(text.splitlines()) - 1)
        with open(session, "a", encoding="utf-8") as f:
            f.write(json.dumps(appended(1, last)[0]) + "\n")
        b.wait_for("document.querySelector('#transcript [data-entry-id=\"NEW0\"]') !== null", timeout=15)
        # redact --in-place, then Pi appends: the ids and the count before the append are the same.
        rewritten = session.read_text(encoding="utf-8").replace("JWT", "[REDACTED]")
        session.write_text(rewritten, encoding="utf-8")
        with open(session, "a", encoding="utf-8") as f:
            f.write(json.dumps(appended(2, "NEW0")[1]) + "\n")
        b.wait_for("document.querySelector('#transcript [data-entry-id=\"NEW1\"]') !== null", timeout=15)
        assert b.eval("document.documentElement.dataset.updateFrom") == "0"
        state = b.state()
        assert "JWT" not in state["text"] and "[REDACTED]" in state["text"]


def _serve_in_process(monkeypatch: pytest.MonkeyPatch, argv: list[str], opened: list[str]) -> Any:
    """Run ``pitools serve`` through the real entry point; the server stops once it is up (and,
    if the browser is opened, once the opener has been called)."""
    import webbrowser

    from pitools.cli import serve_app

    servers: list[Any] = []
    real_make = serve_app.make_server

    def make(app: Any, port: int) -> Any:
        srv = real_make(app, port)
        servers.append(srv)
        if "--no-browser" in argv:
            threading.Timer(0.5, srv.shutdown).start()
        return srv

    def fake_open(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.append(url)
        threading.Thread(target=servers[0].shutdown, daemon=True).start()
        return True

    monkeypatch.setattr(serve_app, "make_server", make)
    monkeypatch.setattr(webbrowser, "open", fake_open)
    return CliRunner().invoke(PITOOLS, argv, catch_exceptions=False)


def test_serve_opens_the_browser_on_its_url(monkeypatch: pytest.MonkeyPatch, archive: Path, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    opened: list[str] = []
    result = _serve_in_process(monkeypatch, ["serve", "--session-dir", str(archive)], opened)
    assert result.exit_code == 0, result.stderr
    url = result.stdout.splitlines()[0]
    assert url.startswith("http://127.0.0.1:") and "/?token=" in url
    # The browser gets the same address with a one-time code: never the token, which its
    # command line would show to every local user.
    assert len(opened) == 1 and opened[0].split("?")[0] == url.split("?")[0]
    token = url.split("token=", 1)[1]
    assert "?login=" in opened[0] and token not in opened[0]


def test_no_browser_opens_nothing(monkeypatch: pytest.MonkeyPatch, archive: Path, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    opened: list[str] = []
    result = _serve_in_process(monkeypatch, ["serve", "--no-browser", "--session-dir", str(archive)], opened)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("http://127.0.0.1:") and opened == []
