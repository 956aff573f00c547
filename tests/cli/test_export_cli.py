"""``pitools export``: Markdown (snapshots), self-contained HTML (structure, escaping, Chromium), JSONL."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import zlib
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests import support

GOLDEN = support.GOLDEN
Run = Callable[..., Result]  # the `run` fixture of tests/cli/conftest.py

# A 2x2 PNG (red, green / blue, white).
PNG_2X2 = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR42mP4z8DAAMIM/4EAAB/uBfvxq7p3AAAAAElFTkSuQmCC"
HOSTILE = '<script>alert("pwned")</script>'


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for case in ("seed-running-example", "gen-s0000_v3"):
        (tmp_path / f"{case}.jsonl").write_bytes((GOLDEN / case / "session.jsonl").read_bytes())
    return tmp_path


def _entry(kind: str, eid: str, parent: str | None, minute: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": eid,
        "parentId": parent,
        "timestamp": f"2026-04-01T12:{minute:02d}:00.000Z",
        **fields,
    }


def hostile_session(path: Path) -> Path:
    """Every kind of entry, with markup and quotes in every user-controlled string."""
    long_output = "\n".join(f"line {i} <tag> & stuff" for i in range(200))
    values = [
        {
            "type": "session",
            "version": 3,
            "id": "hostile",
            "timestamp": "2026-04-01T12:00:00.000Z",
            "cwd": "/tmp/<cwd>",
        },
        _entry("model_change", "mc", None, 0, provider="anthropic", modelId="claude-<x>"),
        _entry("thinking_level_change", "tl", "mc", 0, thinkingLevel="high"),
        _entry(
            "message",
            "u1",
            "tl",
            1,
            message={
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Look at this {HOSTILE} & tell me"},
                    {"type": "image", "mimeType": "image/png", "data": PNG_2X2},
                    {"type": "image", "mimeType": 'image/png" onload="alert(1)', "data": PNG_2X2},
                ],
                "timestamp": 1775044860000,
            },
        ),
        _entry(
            "message",
            "a1",
            "u1",
            2,
            message={
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Private </details> reasoning"},
                    {"type": "text", "text": "Reading ```the``` file </pre>"},
                    {
                        "type": "toolCall",
                        "id": "call-1",
                        "name": "<img src=x onerror=alert(1)>",
                        "arguments": {"path": 'a"b', "n": 200.0},
                    },
                ],
                "provider": "anthropic",
                "model": "claude-<x>",
                "usage": {
                    "input": 1200,
                    "output": 80,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "cost": {"total": 0.0123},
                },
                "stopReason": "toolUse",
            },
        ),
        _entry(
            "message",
            "t1",
            "a1",
            3,
            message={
                "role": "toolResult",
                "toolCallId": "call-1",
                "toolName": "read",
                "content": [{"type": "text", "text": long_output}],
                "isError": False,
            },
        ),
        _entry("label", "lb", "t1", 4, targetId="u1", label=f'"><b>{HOSTILE}'),
        _entry(
            "compaction",
            "c1",
            "lb",
            5,
            summary=f"Summary with {HOSTILE}",
            firstKeptEntryId="t1",
            tokensBefore=5000,
        ),
        _entry("branch_summary", "bs", "c1", 6, fromId="zz", summary="Left a branch"),
        _entry("session_info", "si", "bs", 7, name=f"Named {HOSTILE}"),
        _entry("custom_message", "cm", "si", 8, customType="note<>", content="custom text", display=True),
        _entry("custom", "cu", "cm", 9, customType="state", data={"k": HOSTILE}),
        _entry("context_edit", "ce", "cu", 10, targetId="t1", replacement=None),
        _entry(
            "message",
            "b1",
            "ce",
            11,
            message={"role": "bashExecution", "command": "ls <dir>", "output": "x\ny", "exitCode": 1},
        ),
        _entry("message", "u2", "a1", 12, message={"role": "user", "content": "a second branch"}),
    ]
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8")
    return path


# -- Markdown -------------------------------------------------------------------------------


def test_markdown_branch_snapshot(run: Run, workdir: Path, snapshot: Any) -> None:
    assert run("export", "seed-running-example.jsonl").stdout == snapshot


def test_markdown_whole_tree_snapshot(run: Run, workdir: Path, snapshot: Any) -> None:
    assert run("export", "seed-running-example.jsonl", "--all").stdout == snapshot


def test_markdown_hostile_snapshot(run: Run, workdir: Path, snapshot: Any) -> None:
    hostile_session(workdir / "hostile.jsonl")
    out = run("export", "hostile.jsonl", "--leaf", "b1").stdout
    assert "*\\[image image/png, 75 B\\]*" in out and "data:image" not in out
    assert "folded" in out  # the long tool result
    assert out == snapshot


def test_markdown_leaf_and_embedded_images(run: Run, workdir: Path) -> None:
    hostile_session(workdir / "hostile.jsonl")
    out = run("export", "hostile.jsonl", "--leaf", "u2", "--images", "embed").stdout
    assert out.count("](data:image/png;base64,") == 1  # the invalid MIME type stays a placeholder
    assert "a second branch" in out and "Compaction" not in out


# -- HTML -------------------------------------------------------------------------------------


class Structure(HTMLParser):
    VOID = frozenset({"meta", "img", "br", "hr", "link", "input"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.errors: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Structure:
    parser = Structure()
    parser.feed(html)
    parser.close()
    assert not parser.errors, parser.errors
    assert parser.stack == []
    return parser


def test_html_is_self_contained_and_escaped(run: Run, workdir: Path) -> None:
    import base64
    import hashlib

    hostile_session(workdir / "hostile.jsonl")
    html = run("export", "hostile.jsonl", "--leaf", "b1", "--format", "html").stdout
    assert html.startswith("<!DOCTYPE html>")
    page = parse(html)
    names = [t for t, _ in page.tags]
    assert "link" not in names and "iframe" not in names and "img" not in names  # the script draws images
    scripts = [a for t, a in page.tags if t == "script"]
    # The read model, the page's script, the entries (the script draws while they are parsed),
    # then the request check (built while the entries were written).
    assert [a.get("type") for a in scripts] == ["application/json", None, "application/json", "application/json"]
    assert [a.get("id") for a in scripts] == ["pt-meta", None, "pt-entries", "pt-late"]
    assert not any("src" in a for a in scripts)
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    policy = csp[0]["content"] or ""
    assert "default-src 'none'" in policy and "connect-src" not in policy and "img-src data:" in policy
    # The one script that runs is the one whose hash the policy names.
    code = html.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    for tag, attrs in page.tags:
        for key in attrs:
            assert not key.startswith("on"), (tag, key)
    # Session text lives only inside the JSON blocks, where no "<" can end them.
    assert HOSTILE not in html and "</details> reasoning" not in html
    data = html.split('id="pt-entries">', 1)[1].split("</script>", 1)[0]
    entries = json.loads(data)
    assert [e["id"] for e in entries] == [
        "mc",
        "tl",
        "u1",
        "a1",
        "t1",
        "lb",
        "c1",
        "bs",
        "si",
        "cm",
        "cu",
        "ce",
        "b1",
        "u2",
    ]
    assert HOSTILE in entries[2]["message"]["content"][0]["text"]
    meta = json.loads(html.split('id="pt-meta">', 1)[1].split("</script>", 1)[0])
    assert meta["initialLeaf"] == 12 and meta["defaultLeaf"] == 13  # --leaf b1; Pi's default is u2
    assert "<style>" in html and "http://" not in html and "https://" not in html


def test_html_images_placeholder_leaves_the_data_out(run: Run, workdir: Path) -> None:
    hostile_session(workdir / "hostile.jsonl")
    embedded = run("export", "hostile.jsonl", "--format", "html").stdout
    slim = run("export", "hostile.jsonl", "--format", "html", "--images", "placeholder").stdout
    assert PNG_2X2 in embedded and PNG_2X2 not in slim


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed")
def test_html_hostile_text_stays_text_in_chromium(run: Run, workdir: Path) -> None:
    from tests.browser import Browser

    hostile_session(workdir / "hostile.jsonl")
    run("export", "hostile.jsonl", "--format", "html", "-o", "page.html")
    with Browser() as b:
        b.open((workdir / "page.html").as_uri() + "#leaf=b1")
        state = b.state()
        assert state["transcript"] == ["mc", "tl", "u1", "a1", "t1", "lb", "c1", "bs", "si", "cm", "cu", "ce", "b1"]
        # Pi's context at b1: the compaction, kept from t1 (firstKeptEntryId), then what follows.
        assert state["inContext"] == ["t1", "lb", "c1", "bs", "si", "cm", "cu", "ce", "b1"]
        assert HOSTILE in state["text"] and "Private </details> reasoning" not in state["text"]  # thinking folded
        assert state["scripts"] == 4  # nothing the session says became a script
        found = b.eval(
            "({imgs: Array.from(document.images, i => i.src.slice(0, 22)), "
            "handlers: Array.from(document.querySelectorAll('*'))"
            ".filter(e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length, "
            "details: document.querySelectorAll('#transcript details').length, "
            "diffs: document.querySelectorAll('pre.diff').length})"
        )
        assert found["imgs"] == ["data:image/png;base64,"]  # the bad MIME type is a placeholder
        assert found["handlers"] == 0 and found["details"] >= 2
        # Keyboard: the arrow key moves the selection along the visible tree rows.
        b.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp'}))")
        assert b.eval("location.hash") != "#leaf=b1"
        b.open((workdir / "page.html").as_uri() + "?2")  # no fragment: Pi's default leaf
        assert b.state()["transcript"][-1] == "u2"


def _png_pixels(data: bytes) -> set[bytes]:
    """Distinct pixels of an 8-bit RGB(A) PNG, decoded with zlib alone (every 4th row, enough for variety)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8] == 8 and body[12] == 0, "8-bit, non-interlaced"
            channels = {2: 3, 6: 4}[body[9]]
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    seen: set[bytes] = set()
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        if y % 4 == 0:
            seen.update(bytes(line[x : x + 3]) for x in range(0, stride, channels))
        prev = line
    return seen


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed")
def test_html_renders_in_headless_chromium(run: Run, workdir: Path) -> None:
    hostile_session(workdir / "hostile.jsonl")
    run("export", "hostile.jsonl", "--leaf", "b1", "--format", "html", "-o", "page.html")
    shot = workdir / "page.png"
    cmd = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        f"--user-data-dir={workdir / 'profile'}", f"--screenshot={shot}", "--window-size=480,360",
        "--hide-scrollbars", (workdir / "page.html").as_uri(),
    ]  # fmt: skip
    subprocess.run(cmd, capture_output=True, timeout=60, check=True)
    pixels = _png_pixels(shot.read_bytes())
    assert len(pixels) > 20, "the screenshot is (nearly) blank"
    assert b"\xff\xff\xff" in pixels or b"\r\x11\x17" in pixels  # the page background


# -- JSONL ------------------------------------------------------------------------------------


def test_jsonl_is_a_standalone_session(run: Run, workdir: Path) -> None:
    from pitools.core.context.build import replay_context
    from pitools.core.session.load import load

    result = run("export", "gen-s0000_v3.jsonl", "--leaf", "3d17697c", "--format", "jsonl", "-o", "out/branch.jsonl")
    assert "wrote out/branch.jsonl" in result.stderr and result.stdout == ""
    exported = load(workdir / "out" / "branch.jsonl")
    source = load(workdir / "gen-s0000_v3.jsonl")
    assert exported.session.header["id"] == source.session.header["id"]
    assert "parentSession" not in exported.session.header and exported.session.header["version"] == 3
    assert not [d for d in exported.session.diagnostics if d.severity == "error"]
    assert len(exported.index.leaves()) == 1
    assert [e["id"] for e in exported.session.entries] == [e["id"] for e in source.index.get_branch("3d17697c")]
    from pitools.core.js.json.encode import jsonable

    ours = replay_context(exported.index, exported.index.leaf_id).projection.messages
    theirs = replay_context(source.index, "3d17697c").projection.messages
    # Compared as JavaScript numbers: Pi's JSON.stringify writes 12345678901234567890 as ...67000.
    assert jsonable(ours) == jsonable(theirs)
    # stdout without -o: the same bytes except the header's timestamp.
    printed = run("export", "gen-s0000_v3.jsonl", "--leaf", "3d17697c", "--format", "jsonl").stdout.splitlines()
    written = (workdir / "out" / "branch.jsonl").read_text(encoding="utf-8").splitlines()
    assert printed[1:] == written[1:]


def test_output_file_and_usage_errors(run: Run, workdir: Path) -> None:
    run("export", "seed-running-example.jsonl", "-o", "t.md")
    assert (workdir / "t.md").read_text(encoding="utf-8").startswith("# Session S1")
    result = run("export", "seed-running-example.jsonl", "-o", "t.md", exit_code=1)
    assert "already exists" in result.stderr
    assert "--all" in run("export", "seed-running-example.jsonl", "--all", "--leaf", "A3", exit_code=2).stderr
    run("export", "seed-running-example.jsonl", "--all", "--format", "jsonl", exit_code=2)
    assert "matches no entry" in run("export", "seed-running-example.jsonl", "--leaf", "nope", exit_code=1).stderr


def test_export_without_a_file_uses_the_most_recent_session(
    run: Run, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitools.core.session.locate import default_session_dir

    env = {"HOME": str(workdir), "PI_CODING_AGENT_DIR": str(workdir / "agent")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    folder = Path(default_session_dir(str(workdir), env))
    folder.mkdir(parents=True)
    shutil.copy(workdir / "seed-running-example.jsonl", folder / "2026-07-29T09-00-00-000Z_S1.jsonl")
    result = run("export")
    assert "using the most recent session" in result.stderr and result.stdout.startswith("# Session S1")
    assert run("export", "S1", "--format", "html").stdout.startswith("<!DOCTYPE html>")


def test_png_decoder_sees_colours() -> None:
    png = base64.b64decode(PNG_2X2)
    assert _png_pixels(png) >= {b"\xff\x00\x00", b"\x00\xff\x00"}


def test_format_follows_the_output_extension(run: Run, workdir: Path) -> None:
    seed = "seed-running-example.jsonl"
    run("export", seed, "-o", "page.html")
    assert (workdir / "page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    run("export", seed, "-o", "notes.markdown")
    assert (workdir / "notes.markdown").read_text(encoding="utf-8").startswith("# Session S1")
    run("export", seed, "-o", "branch.jsonl")
    assert json.loads((workdir / "branch.jsonl").read_text(encoding="utf-8").splitlines()[0])["type"] == "session"
    run("export", seed, "-o", "other.txt")  # an extension that names no format: markdown, as on stdout
    assert (workdir / "other.txt").read_text(encoding="utf-8").startswith("# Session S1")


def test_a_format_that_contradicts_the_extension_is_refused(run: Run, workdir: Path) -> None:
    seed = "seed-running-example.jsonl"
    result = run("export", seed, "--format", "markdown", "-o", "page.html", exit_code=2)
    assert "--format markdown does not write a .html file (--format html does)" in result.stderr
    assert not (workdir / "page.html").exists()
    assert "--format otlp or atif" in run("export", seed, "-o", "t.json", exit_code=2).stderr
    run("export", seed, "--format", "atif", "-o", "t.json")
    assert json.loads((workdir / "t.json").read_text(encoding="utf-8"))


def test_md_is_markdown(run: Run, workdir: Path) -> None:
    seed = "seed-running-example.jsonl"
    assert run("export", seed, "--format", "md").stdout == run("export", seed, "--format", "markdown").stdout
    run("export", seed, "--format", "md", "-o", "t.md")


def test_force_replaces_the_output(run: Run, workdir: Path) -> None:
    seed = "seed-running-example.jsonl"
    (workdir / "t.html").write_text("old")
    assert "--force" in run("export", seed, "-o", "t.html", exit_code=1).stderr
    assert (workdir / "t.html").read_text() == "old"
    run("export", seed, "-o", "t.html", "--force")
    assert (workdir / "t.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    (workdir / "b.jsonl").write_text("old")
    run("export", seed, "-o", "b.jsonl", "--force")
    assert (workdir / "b.jsonl").read_text(encoding="utf-8").startswith('{"type":"session"')
    assert "--force only applies to -o" in run("export", seed, "--force", exit_code=2).stderr


@pytest.mark.parametrize("ahead", [False, True])
def test_html_jobs_give_the_same_page(run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ahead: bool) -> None:
    from pitools.ops import viewer as ops_viewer

    monkeypatch.setattr(ops_viewer, "PARALLEL_CHECK_ENTRIES", 0)  # the helper for any context
    if ahead:  # the helper that reads the file itself, for any file (a big one's way)
        monkeypatch.setattr(ops_viewer, "PARALLEL_CHECK_BYTES", 0)
    src = support.golden_session("heal-wedges")
    one = run("export", src, "--format", "html", "--jobs", "1").stdout
    two = run("export", src, "--format", "html", "--jobs", "2").stdout
    assert one == two and 'id="pt-late">{"check":{' in one
    run("export", src, "--format", "html", "--jobs", "2", "-o", tmp_path / "page.html")
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == one
    err = run("export", src, "--format", "markdown", "--jobs", "2", exit_code=2).stderr
    assert "--jobs is only for --format html" in err


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_a_non_utf8_stdout_gets_the_same_document_escaped(tmp_path: Path, fmt: str) -> None:
    # The page is written as UTF-8 bytes end to end; a terminal or pipe in another encoding gets
    # the same text with what it cannot hold as \uXXXX (safe_utf8_chunks' fallback), through the
    # real entry point in a process of its own.
    import os
    import sys

    src = tmp_path / "s.jsonl"
    text = "caf\u00e9 \u2014 \u65e5\u672c \U0001f600 \u202e evil \x1b[31m"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    entry = {
        "type": "message",
        "id": "u1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    src.write_text("\n".join(json.dumps(v, ensure_ascii=False) for v in (header, entry)) + "\n", encoding="utf-8")

    def export(encoding: str) -> bytes:
        env = {**os.environ, "PYTHONIOENCODING": encoding, "PITOOLS_DEBUG": "0"}
        argv = [sys.executable, "-m", "pitools", "export", str(src), "--format", fmt]
        done = subprocess.run(argv, env=env, capture_output=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    utf8, ascii_ = export("utf-8"), export("ascii")
    assert ascii_.isascii() and "\u00e9".encode() in utf8
    assert ascii_ == utf8.decode("utf-8").encode("ascii", "backslashreplace")
    assert b"\x1b" not in utf8 and "\u202e".encode() not in utf8  # made safe either way
