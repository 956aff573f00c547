"""The archive commands against hostile input (issue 27): regex bombs, a damaged index, lineage
loops, in-place edits that keep size and mtime."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.archive_gen import Archive, archive_in

Run = Callable[..., Result]


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Archive:
    return archive_in(tmp_path, monkeypatch, seed=27)


# -- search --regex: no catastrophic backtracking ------------------------------------------------


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(a|a?)+$", "(.*a){20}"])
def test_regex_bomb_finishes(run: Run, archive: Archive, pattern: str) -> None:
    w = archive.new("/work/bomb")
    w.user("a" * 41 + "!")
    w.user("a" * 5000 + "!")
    w.assistant("a match: aaab and aaa")
    w.write()
    started = time.process_time()
    data = json.loads(run("search", pattern, "--regex", "--format", "json").stdout)
    assert time.process_time() - started < 10
    assert isinstance(data["hits"], list)


def test_regex_still_finds_and_highlights(run: Run, archive: Archive) -> None:
    w = archive.new("/work/re")
    w.user("first line\ndef load_cache(x):\n  pass \u00fcber SURROGATE tail")
    path = w.write()
    path.write_bytes(path.read_bytes().replace(b"SURROGATE", b"\\ud800"))  # a lone surrogate, as JSON allows
    hits = json.loads(run("search", r"^def \w+_cache", "--regex", "--format", "json").stdout)["hits"]
    assert len(hits) == 1
    hits = json.loads(run("search", "ÜBER", "--regex", "--format", "json").stdout)["hits"]
    assert len(hits) == 1
    a, b = hits[0]["highlights"][0]
    assert hits[0]["snippet"][a:b] == "\u00fcber"
    assert json.loads(run("search", "tail$", "--regex", "--format", "json").stdout)["hits"]


@pytest.mark.parametrize("pattern", ["(?<=a)b", "(a)\\1", "x(?!y)", "("])
def test_regex_engine_limits_are_one_line(run: Run, archive: Archive, pattern: str) -> None:
    archive.new("/work/x").write()
    result = run("search", pattern, "--regex", exit_code=1)
    assert result.stderr.startswith("pitools: invalid regular expression:")
    assert len(result.stderr.strip().splitlines()) == 1
    if pattern != "(":
        assert "RE2 syntax" in result.stderr


# -- a damaged index: rebuilt with a warning, never a failed command ------------------------------


def _damage(path: Path, seed: int, spots: int = 6) -> None:
    import random

    rng = random.Random(seed)
    size = path.stat().st_size
    with path.open("r+b") as fh:
        for _ in range(spots):
            fh.seek(rng.randrange(100, size))  # past the header: the pages themselves
            fh.write(rng.randbytes(rng.randint(1, 64)))


@pytest.mark.parametrize("seed", range(6))
def test_damaged_index_files_are_rebuilt(run: Run, archive: Archive, tmp_path: Path, seed: int) -> None:
    for k in range(4):
        w = archive.new(f"/work/app{k}")
        w.conversation(12)
        w.user("the otter answer " * 40)
        w.write()
    run("index")
    expected = json.loads(run("search", "otter", "--format", "json").stdout)["hits"]
    usage = json.loads(run("usage", "--format", "json").stdout)
    assert len(expected) == 4
    cache = tmp_path / "cache"
    files = sorted(cache.glob("index-v*.sqlite"))
    assert len(files) >= 2  # the main database and at least one full-text shard
    for target in files:
        pristine = {p: p.read_bytes() for p in files}
        _damage(target, seed)
        for args in (("search", "otter", "--format", "json"), ("usage", "--format", "json"), ("index",)):
            result = run(*args)  # exit 0, whatever the damage
            assert "Traceback" not in result.stderr
            for line in result.stderr.splitlines():
                assert line.startswith("pitools: warning: index"), line
            if args[0] == "search":
                assert json.loads(result.stdout)["hits"] == expected
            elif args[0] == "usage":
                assert json.loads(result.stdout)["totals"] == usage["totals"]
        for p, data in pristine.items():  # the next file starts from a sound index
            for extra in cache.glob(p.name + "-*"):
                extra.unlink()
            p.write_bytes(data)
        run("index")


def test_shard_changed_behind_our_back_is_verified(run: Run, archive: Archive, tmp_path: Path) -> None:
    w = archive.new("/work/app")
    w.user("the otter answer")
    w.write()
    run("search", "otter")
    shard = next((tmp_path / "cache").glob("index-v*.fts0.sqlite"))
    data = bytearray(shard.read_bytes())
    for at in range(4096, len(data), 4096):  # every page but the first: garbage
        data[at + 8 : at + 200] = bytes(range(192))
    shard.write_bytes(bytes(data))
    result = run("search", "otter", "--format", "json")
    assert "rebuilding it" in result.stderr
    assert len(json.loads(result.stdout)["hits"]) == 1
    again = run("search", "otter", "--format", "json")  # sealed again: no second warning
    assert again.stderr == "" and len(json.loads(again.stdout)["hits"]) == 1


# -- parentSession loops: shared history counts once ----------------------------------------------


def _pi_stats(path: Path) -> dict[str, object] | None:
    """Pi 1.6.0's ``getSessionStats`` of one file, through the reference oracle (None without it)."""
    import os
    import subprocess

    from tests import support

    places = [os.environ.get("PI_ORACLE", "")] + [
        str(up / "shared" / "reference" / "oracle.mjs") for up in support.ROOT.parents
    ]
    oracle = next((Path(p) for p in places if p and Path(p).is_file()), None)
    ref = support.pi_ref_dir()
    if support.node() is None or ref is None or oracle is None:
        return None
    proc = subprocess.run(
        [str(support.node()), str(oracle), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PI_REF_DIR": str(ref)},
        check=True,
    )
    stats: dict[str, object] = json.loads(proc.stdout)["stats"]
    return stats


def _loop(archive: Archive, extra_in_child: int) -> tuple[Path, Path]:
    """A is cloned into C (C's header points at A); then A's header is made to point at C."""
    a = archive.new("/work/loop")
    a.conversation(6)
    a_path = a.write()
    c = archive.fork(a, a.leaf)  # type: ignore[arg-type]
    if extra_in_child:
        c.conversation(extra_in_child)
    c_path = c.write()
    lines = a_path.read_bytes().split(b"\n", 1)
    header = json.loads(lines[0])
    header["parentSession"] = str(c_path)
    a_path.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + lines[1])
    return a_path, c_path


@pytest.mark.parametrize("extra", [0, 2])
def test_parent_session_loop_counts_shared_history_once(run: Run, archive: Archive, extra: int) -> None:
    a_path, _c_path = _loop(archive, extra)
    truth = archive.truth()
    usage = json.loads(run("usage", "--format", "json").stdout)
    assert usage["totals"]["cost"] == pytest.approx(truth["cost"], abs=1e-9)
    listing = json.loads(run("ls", "--all", "--format", "json").stdout)
    assert listing["totals"]["cost"] == pytest.approx(truth["cost"], abs=1e-9)
    if extra == 0:
        # The clone adds nothing: the archive's total is A's own, as Pi's getSessionStats counts it.
        pi = _pi_stats(a_path)
        if pi is None:
            pytest.skip("the Pi reference oracle is not available")
        assert usage["totals"]["cost"] == pytest.approx(pi["cost"], abs=1e-9)


def test_loop_cut_is_the_same_whatever_the_order() -> None:
    from pitools.core.views.lineage import SessionRef, resolve_parents

    names = ["/s/2026-01-02_b.jsonl", "/s/2026-01-01_a.jsonl", "/s/2026-01-03_c.jsonl"]
    refs = [SessionRef(n, None, names[(i + 1) % 3], "/s") for i, n in enumerate(names)]  # a three-session loop
    for order in (refs, refs[::-1], refs[1:] + refs[:1]):
        parents = resolve_parents(order, canonical=lambda p: p)
        assert parents["/s/2026-01-01_a.jsonl"] is None  # the oldest file is the root
        assert sum(v is None for v in parents.values()) == 1


# -- an in-place edit that keeps size, mtime and inode -------------------------------------------


def _same_tick(path: Path) -> None:
    """Give ``path`` an mtime in the clock tick of the next read: the state an edit made right after
    pitools read the file (in the same tick) leaves, which a test cannot time for real."""
    import os

    now = time.time_ns() + 1_000_000_000
    os.utime(path, ns=(now, now))


def _edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Change bytes of ``path`` without changing its size, inode or mtime."""
    import os

    assert len(old) == len(new)
    st = path.stat()
    with path.open("r+b") as fh:
        data = fh.read()
        fh.seek(data.index(old))
        fh.write(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)


def test_same_size_same_mtime_edit_reaches_the_index(run: Run, archive: Archive) -> None:
    w = archive.new("/work/edit")
    w.user("the walrus answer")
    path = w.write()
    _same_tick(path)
    assert len(json.loads(run("search", "walrus", "--format", "json").stdout)["hits"]) == 1
    _edit_in_place(path, b"walrus", b"narwal")  # written in the tick the index read it
    assert json.loads(run("search", "walrus", "--format", "json").stdout)["hits"] == []
    assert len(json.loads(run("search", "narwal", "--format", "json").stdout)["hits"]) == 1


def test_settled_files_are_not_read_again(run: Run, archive: Archive) -> None:
    w = archive.new("/work/edit")
    w.user("the walrus answer")
    w.write()
    time.sleep(0.1)  # past RACY_NS
    run("index")
    again = json.loads(run("index", "--format", "json").stdout)["update"]
    assert again["unchanged"] == 1 and again["added"] == 0


def test_same_size_same_mtime_edit_reaches_the_dataset(run: Run, archive: Archive, tmp_path: Path) -> None:
    w = archive.new("/work/edit")
    w.user("the walrus answer")
    path = w.write()
    _same_tick(path)
    out = tmp_path / "ds"
    run("dataset", str(path.parent), "-o", str(out), "--format", "jsonl")
    _edit_in_place(path, b"walrus", b"narwal")
    run("dataset", str(path.parent), "-o", str(out), "--format", "jsonl")
    text = "".join(p.read_text() for p in out.rglob("*.jsonl"))
    assert "narwal" in text and "walrus" not in text
