"""``pitools serve``: token and Host refusal, the JSON endpoints equal the commands' JSON, pages in
Chromium (the viewer contract against Pi's recordings) and live updates when a session grows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests import support

Run = Callable[..., Result]
CASES = {"S1": "seed-running-example", "gen": "gen-s0000_v3"}


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name, case in CASES.items():
        shutil.copyfile(support.golden_session(case), folder / f"{name}.jsonl")
    return folder


@pytest.fixture
def server(archive: Path) -> Iterator[Any]:
    with support.serving(archive) as app:
        yield app


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


_RAW = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def get(
    app: Any, path: str, *, cookie: bool = True, host: str | None = None, method: str = "GET", root: bool = True
) -> tuple[int, dict[str, str], bytes]:
    """One request to the app (``path`` under its root unless ``root`` is False)."""
    url = app.url(path) if root else f"http://127.0.0.1:{app.port}{path}"
    req = urllib.request.Request(url, method=method)
    if cookie:
        req.add_header("Cookie", f"{app.cookie}={app.token}")
    if host is not None:
        req.add_header("Host", host)
    try:
        with _RAW.open(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_requests_without_the_token_or_with_a_foreign_host_are_refused(server: Any) -> None:
    assert get(server, "/api/ls", cookie=False)[0] == 401
    assert get(server, "/?token=wrong", cookie=False)[0] == 401
    status, _, body = get(server, "/api/ls", cookie=False, host=f"evil.example:{server.port}")
    assert status == 403 and b"Host" in body
    # DNS rebinding: the right token (cookie) on a page served under another name is still refused.
    assert get(server, "/api/ls", host=f"attacker.test:{server.port}")[0] == 403
    assert get(server, "/api/ls", host="127.0.0.1:1")[0] == 403
    status, headers, _ = get(server, f"/?token={server.token}", cookie=False)
    assert status == 303 and headers["Location"] == server.root + "/"
    assert f"{server.cookie}={server.token}" in headers["Set-Cookie"] and "HttpOnly" in headers["Set-Cookie"]
    assert f"Path={server.root}/" in headers["Set-Cookie"]
    assert "SameSite=Strict" in headers["Set-Cookie"]
    assert get(server, "/api/ls")[0] == 200
    assert get(server, "/api/ls", method="POST")[0] == 405
    assert get(server, "/session/nope")[0] == 404
    # Outside its root the app answers nothing, the cookie notwithstanding.
    for outside in ("/", "/api/ls", f"/?token={server.token}", server.root + "x/api/ls"):
        assert get(server, outside, root=False)[0] == 404, outside
    assert get(server, server.root, root=False)[0] == 308  # to root + "/", where relative links work


def test_a_one_time_code_is_swapped_for_the_cookie_once(server: Any) -> None:
    """Issue 36 item 8: the browser serve opens gets a code, not the token (its command line is
    readable by other local users); the code works once."""
    code = server.one_time_code()
    status, headers, _ = get(server, f"/session/S1?login={code}", cookie=False)
    assert status == 303 and headers["Location"] == server.root + "/session/S1"
    assert f"{server.cookie}={server.token}" in headers["Set-Cookie"]
    assert get(server, f"/session/S1?login={code}", cookie=False)[0] == 401  # used up
    assert get(server, "/?login=made-up", cookie=False)[0] == 401


@pytest.fixture
def other_server() -> Iterator[tuple[int, list[str]]]:
    """Another web server on 127.0.0.1 (another port): records the Cookie header of each request."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Cookie") or "")
            body = b"<!DOCTYPE html><title>other</title><p>other server</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv.server_address[1], seen
    finally:
        srv.shutdown()
        srv.server_close()


def test_json_endpoints_equal_the_commands_json(run: Run, server: Any, archive: Path) -> None:
    d = str(archive)
    pairs = [
        ("/api/ls", ["ls", "--all", "--session-dir", d]),
        ("/api/ls?sort=cost&limit=1", ["ls", "--all", "--session-dir", d, "--sort", "cost", "--limit", "1"]),
        ("/api/search?q=auth", ["search", "auth", "--session-dir", d]),
        (
            "/api/search?q=the&role=assistant&branch=current&limit=3",
            ["search", "the", "--session-dir", d, "--role", "assistant", "--branch", "current", "--limit", "3"],
        ),
        ("/api/usage?by=model", ["usage", "--by", "model", "--session-dir", d]),
        ("/api/usage?by=day&breakdown=1", ["usage", "--by", "day", "--breakdown", "--session-dir", d]),
        # The filters every front end reads into the same query objects (pitools.ops.queries).
        (
            "/api/ls?since=2020-01-01&sort=name",
            ["ls", "--all", "--session-dir", d, "--since", "2020-01-01", "--sort", "name"],
        ),
        (
            "/api/usage?by=month&since=2020-01&until=2099-12&timezone=UTC",
            ["usage", "--by", "month", "--since", "2020-01", "--until", "2099-12", "--timezone", "UTC",
             "--session-dir", d],
        ),
        (
            "/api/search?q=the&since=2020-01-01&timezone=Europe/Paris&tool=bash&limit=0",
            ["search", "the", "--since", "2020-01-01", "--timezone", "Europe/Paris", "--tool", "bash", "--limit", "0",
             "--session-dir", d],
        ),
    ]  # fmt: skip
    for path, argv in pairs:
        status, headers, body = get(server, path)
        assert status == 200 and headers["Content-Type"].startswith("application/json"), path
        cli_out = run(*argv, "--format", "json").stdout_bytes
        assert body == cli_out, path
        assert json.loads(body)  # a real document, not an empty one
    assert get(server, "/api/usage?by=nonsense")[0] == 400
    assert get(server, "/api/search?q=x&limit=-1")[0] == 400
    # An unreadable time is the user's mistake, named (422), as the command's usage error names it.
    status, _, body = get(server, "/api/ls?since=yesterdayish")
    assert status == 422 and b"yesterdayish" in body
    assert get(server, "/api/usage?until=soon")[0] == 422


def test_the_command_prints_its_url_first(archive: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    argv = [sys.executable, "-m", "pitools", "serve", "--no-browser", "--session-dir", str(archive)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode().strip()
            assert line.startswith("http://127.0.0.1:") and "/?token=" in line
            token = line.split("token=", 1)[1]
            assert len(token) >= 24
            import http.cookiejar

            jar = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), jar)
            with opener.open(line, timeout=30) as resp:  # the redirect sets the cookie; / answers
                assert resp.status == 200 and b"<title>pitools: sessions</title>" in resp.read()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


# -- in Chromium ----------------------------------------------------------------------------------

chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from tests.browser import Browser

    with Browser() as b:
        yield b


#: Empty the usage form's since field and submit it.
CLEAR_SINCE = (
    "document.querySelector('#usage [name=since]').value = ''; document.querySelector('#usage button').click()"
)


@chromium
def test_served_pages_match_pi_and_the_home_page_lists_sessions(browser: Any, server: Any) -> None:
    base = server.url("")
    browser.open(f"{base}/?token={server.token}")
    ids = browser.eval("Array.from(document.querySelectorAll('[data-session-id]'), r => r.dataset.sessionId).sort()")
    assert ids == sorted(["S1", support.golden_recording(CASES["gen"])["sessionId"]])
    # Usage opens on the last 30 days (the golden sessions are older): clearing the field shows all time.
    browser.wait_for("/since 30d/.test(document.querySelector('#chart').textContent)")
    browser.eval(
        "document.querySelector('#usage [name=since]').value = ''; document.querySelector('#usage button').click()"
    )
    browser.wait_for("document.querySelectorAll('#chart .barrow').length > 0")
    checked = 0
    for sid, case in (("S1", CASES["S1"]), (support.golden_recording(CASES["gen"])["sessionId"], CASES["gen"])):
        rec = support.golden_recording(case)
        for n, leaf in enumerate(rec["requestedLeaves"][:3]):
            browser.open(f"{base}/session/{sid}?n={n}#leaf={leaf}")
            state = browser.state()
            want = rec["byLeaf"][leaf]
            assert state["transcript"] == want["path"], (case, leaf)
            assert sorted(state["inContext"]) == sorted(want["contextEntries"]), (case, leaf)
            assert len(state["tree"]) == len(rec["entries"])
            checked += 1
    assert checked >= 4


@chromium
def test_an_open_session_follows_appends(browser: Any, server: Any, archive: Path) -> None:
    base = server.url("")
    browser.open(f"{base}/session/S1?token={server.token}")
    assert browser.state()["transcript"][-1] == "C1"
    entry = {
        "type": "message",
        "id": "NEW1",
        "parentId": "C1",
        "timestamp": "2026-07-29T10:00:00.000Z",
        "message": {"role": "user", "content": "appended <b>while open</b>", "timestamp": 2},
    }
    with open(archive / "S1.jsonl", "a", encoding="utf-8") as f:  # as Pi appends: one line
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    started = time.monotonic()
    browser.wait_for("document.querySelector('#transcript [data-entry-id=\"NEW1\"]') !== null", timeout=10)
    assert time.monotonic() - started < 3.5
    state = browser.state()
    assert state["transcript"][-2:] == ["C1", "NEW1"] and "NEW1" in state["inContext"]
    assert "appended <b>while open</b>" in state["text"]  # shown as text, not markup
    # A reload shows it too.
    browser.open(f"{base}/session/S1?n=2")
    assert browser.state()["transcript"][-1] == "NEW1"


@chromium
def test_the_home_page_says_what_it_shows(browser: Any, server: Any) -> None:
    """The search hint is one attribute (its quotes escaped for HTML), the usage range it applies is
    the one its field shows, and chart labels are not coloured as the highlighter's keywords."""
    browser.open(server.url(f"/?token={server.token}"))
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    assert browser.eval("document.querySelector('#search [name=q]').placeholder") == 'words, "a phrase", prefix*'
    assert browser.eval("document.querySelector('#search [name=q]').getAttributeNames().sort().join()") == (
        "aria-label,name,placeholder,type"
    )
    assert browser.eval("document.querySelector('#usage [name=since]').value") == "30d"
    browser.wait_for("/Total since 30d:/.test(document.querySelector('#chart').textContent)")
    browser.eval(
        "document.querySelector('#usage [name=since]').value = ''; document.querySelector('#usage button').click()"
    )
    browser.wait_for("/Total \\(all time\\):/.test(document.querySelector('#chart').textContent)")
    browser.wait_for("document.querySelectorAll('#chart .barrow').length > 0")
    label = browser.eval("getComputedStyle(document.querySelector('#chart .barrow span')).color")
    text = browser.eval("getComputedStyle(document.body).color")
    keyword = browser.eval(
        "(() => { const s = document.createElement('span'); s.className = 'k'; document.body.appendChild(s);"
        " const c = getComputedStyle(s).color; s.remove(); return c; })()"
    )
    assert label == text and label != keyword


def test_other_local_servers_never_get_the_cookie(browser: Any, server: Any, other_server: Any) -> None:
    """Issue 36 item 8: cookies ignore ports; with Path=/ a browser sent the token to every
    other server on 127.0.0.1. Bound to the app's random root, it goes to this app only."""
    port, seen = other_server
    browser.open(server.url(f"/?token={server.token}"))
    assert browser.eval("document.querySelectorAll('[data-session-id]').length") == 2  # signed in
    # (Only a server asked for the app's own random root would get it: the browser cannot tell
    # ports apart, and the root is not told to anyone but the user.)
    for path in ("/", "/api/ls", "/session/S1", "/pitools-other/", "/favicon.ico"):
        browser.call("Page.navigate", {"url": f"http://127.0.0.1:{port}{path}"}, session=True)
        browser.wait_for("document.title === 'other'", timeout=30)
    assert len(seen) >= 5
    assert not any(server.token in cookie for cookie in seen), seen


def _two_files_one_id(folder: Path) -> tuple[Path, Path]:
    """Two session files with the same id (a copy that went on differently)."""
    first, second = folder / "a.jsonl", folder / "b.jsonl"
    shutil.copyfile(support.golden_session(CASES["S1"]), first)
    text = support.golden_session(CASES["S1"]).read_text(encoding="utf-8")
    last = json.loads(text.splitlines()[-1])["id"]
    extra = {"type": "message", "id": "ONLY-B", "parentId": last, "timestamp": "2026-07-29T10:00:00.000Z",
             "message": {"role": "user", "content": "only in b", "timestamp": 2}}  # fmt: skip
    second.write_text(text + json.dumps(extra) + "\n", encoding="utf-8")
    return first, second


def test_two_files_with_one_id_are_told_apart_by_path(tmp_path: Path) -> None:
    """Issue 36 item 11: both rows opened the same file; now each row names its file, and the
    bare id, which no longer says which, is refused rather than guessed."""
    folder = tmp_path / "dup"
    folder.mkdir()
    first, second = _two_files_one_id(folder)
    with support.serving(folder) as app:
        listed = {s["path"]: s for s in json.loads(get(app, "/api/ls")[2])["sessions"]}
        assert sorted(listed) == sorted([str(first), str(second)])
        assert get(app, "/session/S1")[0] == 409
        assert get(app, "/session/S1?path=" + urllib.request.quote(str(tmp_path / "other.jsonl"), safe=""))[0] == 404
        for path, wanted in ((first, False), (second, True)):
            q = "?path=" + urllib.request.quote(str(path), safe="")
            status, _, page = get(app, "/session/S1" + q)
            assert status == 200 and (b"ONLY-B" in page) is wanted
            stamp = json.loads(get(app, "/session/S1/stamp" + q)[2])["stamp"]
            assert stamp == app.stamp(str(path))
            data = get(app, "/session/S1/data" + q)[2]
            assert (b"ONLY-B" in data) is wanted


@chromium
def test_the_home_page_opens_each_of_two_files_with_one_id(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "dup"
    folder.mkdir()
    _two_files_one_id(folder)
    with support.serving(folder) as app:
        base = app.url("")
        browser.open(f"{base}/?token={app.token}")
        hrefs = browser.eval("Array.from(document.querySelectorAll('[data-session-id] a'), a => a.href)")
        assert len(hrefs) == 2
        ends = []
        for href in hrefs:
            browser.open(href)
            ends.append(browser.state()["transcript"][-1])
        assert sorted(ends) == ["C1", "ONLY-B"]


def test_idle_and_half_sent_connections_are_dropped_and_capped(archive: Path) -> None:
    """Issue 36 item 9: 300 idle or half-sent connections held 302 threads. Now a connection
    silent for the timeout is closed, and past the cap a new one gets 503 at once."""
    import socket
    import threading

    from pitools.cli.serve_app import App, make_server

    app = App(session_dir=str(archive))
    srv = make_server(app, 0, timeout=1.0, max_connections=4)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    held: list[socket.socket] = []
    try:
        baseline = threading.active_count()
        for i in range(4):  # two idle, two half-sent
            conn = socket.create_connection(("127.0.0.1", app.port), timeout=10)
            if i % 2:
                conn.sendall(b"GET " + app.root.encode() + b"/api/ls HTTP/1.1\r\nHost: 127.0.0.1")
            held.append(conn)
        time.sleep(0.3)
        assert threading.active_count() <= baseline + 4
        extra = socket.create_connection(("127.0.0.1", app.port), timeout=10)
        assert extra.recv(100).startswith(b"HTTP/1.0 503")
        extra.close()
        started = time.monotonic()
        for conn in held:  # each is closed by the server after its timeout
            conn.settimeout(10)
            while conn.recv(4096):
                pass
        assert time.monotonic() - started < 5
        deadline = time.monotonic() + 5
        while threading.active_count() > baseline and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() <= baseline
        assert get(app, "/api/ls")[0] == 200  # the slots are free again
    finally:
        for conn in held:
            conn.close()
        srv.shutdown()
        srv.server_close()


def test_a_session_page_is_streamed_not_built_whole(tmp_path: Path) -> None:
    """Issue 36 item 9: a 40 MB session's page peaked at 411 MB in the server (the page joined
    into one string, then encoded). It is now written piece by piece from the lean load: no
    piece holds more than a small part of it, and no length is known ahead."""
    folder = tmp_path / "big"
    folder.mkdir()
    header = {"type": "session", "version": 3, "id": "BIG", "timestamp": "2026-07-29T10:00:00.000Z", "cwd": "/w"}
    lines, parent = [json.dumps(header)], None
    for i in range(3000):
        entry = {"type": "message", "id": f"E{i}", "parentId": parent, "timestamp": "2026-07-29T10:00:01.000Z",
                 "message": {"role": "user", "content": f"message {i} " + "x" * 200, "timestamp": 1}}  # fmt: skip
        lines.append(json.dumps(entry))
        parent = f"E{i}"
    (folder / "big.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with support.serving(folder) as app:
        for route in ("/session/BIG", "/session/BIG/data"):
            status, headers, body = get(app, route)
            assert status == 200 and "Content-Length" not in headers, route
            assert body.count(b"message 2999 ") >= 1
        pieces = list(app.session_page("BIG", None))
        data = list(app.session_data("BIG"))
        # Each request closes the file its lean load opened, a HEAD (nothing sent) too.
        fds = len(os.listdir("/proc/self/fd"))
        for _ in range(4):
            for method in ("GET", "HEAD"):
                assert get(app, "/session/BIG", method=method)[0] == 200
                assert get(app, "/session/BIG/data", method=method)[0] == 200
        assert len(os.listdir("/proc/self/fd")) <= fds + 2
    for made in (pieces, data):
        total = sum(len(p) for p in made)
        assert len(made) > 5 and max(len(p) for p in made) < total / 4


@chromium
def test_the_home_page_shows_how_to_resume_each_session_and_hit(browser: Any, server: Any, archive: Path) -> None:
    """Each listed session shows `pi --session PATH` as core/views/resume.py writes it, and each
    search hit its resume command from the search JSON."""
    from pitools.core.views.resume import resume_command

    browser.open(server.url(f"/?token={server.token}"))
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    shown = browser.eval("Array.from(document.querySelectorAll('#sessions .resume code'), c => c.textContent).sort()")
    assert shown == sorted(resume_command(str(archive / f"{name}.jsonl")) for name in CASES)
    browser.eval(
        "document.querySelector('#search [name=q]').value = 'JWT'; document.querySelector('#search button').click()"
    )
    browser.wait_for("document.querySelectorAll('#hits .hit').length > 0")
    hits = json.loads(get(server, "/api/search?q=JWT")[2])["hits"]
    shown = browser.eval("Array.from(document.querySelectorAll('#hits .resume code'), c => c.textContent)")
    assert shown == [h["commands"][1] for h in hits]


def test_a_page_that_fails_after_its_status_is_reported_not_swallowed(archive: Path, monkeypatch: Any) -> None:
    """A streamed page has sent 200 before it is built; a failure part-way used to vanish (the
    browser got half a page, the terminal nothing). It is now one line on serve's stderr,
    naming the path but never the query (which may carry the token)."""
    from pitools.cli.serve_app import Stream

    reported: list[str] = []

    def failing_page(*_: Any) -> Stream:
        def pieces() -> Iterator[bytes]:
            yield b"<!doctype html><p>first part"
            raise OSError(5, "Input/output error")

        return Stream(pieces(), lambda: None)

    with support.serving(archive) as app:
        app.report = reported.append
        monkeypatch.setattr(app, "session_page", failing_page)
        status, _, body = get(app, "/session/S1?leaf=x")
        assert status == 200 and body == b"<!doctype html><p>first part"
        assert reported == [f"{app.root}/session/S1: the page was cut short: [Errno 5] Input/output error"]
        # A request that fails before its status becomes a 500 and is reported too.
        monkeypatch.setattr(app, "session_page", lambda *_: 1 / 0)
        assert get(app, "/session/S1")[0] == 500
        assert reported[-1] == f"{app.root}/session/S1: internal error: division by zero"


def test_serve_reports_through_its_error_stream(archive: Path, monkeypatch: Any) -> None:
    """``serve`` points the app's reports at its Output's one-line, made-safe stderr messages."""
    from pitools.cli import serve_app

    class Stop(Exception):
        pass

    seen: list[str] = []

    def grab(app: Any, port: int, **_: Any) -> Any:
        app.report("probe")
        raise Stop

    monkeypatch.setattr(serve_app, "make_server", grab)
    fake = type("FakeOut", (), {"message": lambda self, text: seen.append(text)})()
    with pytest.raises(Stop):
        serve_app.serve(fake, port=0, open_browser=False, session_dir=str(archive))
    assert seen == ["probe"]


def test_serving_pages_never_freezes_objects_out_of_the_collector(server: Any) -> None:
    """A command freezes its one loaded session (gc.freeze) to spare the cyclic collector; a
    long-running server must not, or every page it served would stay in the permanent generation."""
    import gc

    gc.unfreeze()  # what earlier tests in this process froze (it may be freed meanwhile)
    for route in ("/session/S1", "/session/S1/data", "/api/ls"):
        assert get(server, route)[0] == 200, route
    assert gc.get_freeze_count() == 0
