"""Output that fits a terminal: ``branches``, ``context`` and ``tree`` at 80, 100 and 120 columns,
``tree --depth`` and the pager (git's rules), through :func:`pitools.cli.main`."""

from __future__ import annotations

import io
import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from rich.cells import cell_len

from pitools.cli import Environment, main
from tests.support import golden_session

Run = Callable[..., Result]
WIDTHS = [80, 100, 120]
#: 578 entries, 7 leaves, forks up to several levels deep.
BIG = golden_session("gen-s0000_v3")


@pytest.mark.parametrize("width", WIDTHS)
def test_branches_divergent_column_is_readable(run: Run, width: int) -> None:
    lines = run("branches", BIG, "--width", str(width)).stdout.splitlines()
    assert all(cell_len(line) <= width for line in lines)
    stories = [line[line.index(tag) :] for line in lines for tag in ("user: ", "leaf: ") if tag in line]
    data = json.loads(run("branches", BIG, "--format", "json").stdout)
    assert len(stories) == 2 * data["branchCount"] == 14
    # Each story line has room for real text (80 columns used to leave "us…").
    assert all(cell_len(text) >= 30 or not text.endswith("…") for text in stories)
    for b in data["branches"]:
        if b["divergentPreview"]:
            assert any(text.startswith("user: " + b["divergentPreview"][:20]) for text in stories)


@pytest.mark.parametrize("width", WIDTHS)
def test_context_header_is_whole(run: Run, width: int) -> None:
    lines = run("context", BIG, "--width", str(width)).stdout.splitlines()
    assert all(cell_len(line) <= width for line in lines)
    head = "\n".join(lines[:2])
    # Every part of the header is there whole, on one line or two (never cut with …).
    for part in ("Context at 3669433b", "model anthropic/claude-sonnet-4-5", "thinking low", "~4,064 tokens"):
        assert part in head
    assert "(chars/4 estimate of every message)" in head
    assert (lines[0].endswith("message)")) == (width >= 120)


def test_context_header_in_a_pipe_is_one_line(run: Run) -> None:
    first = run("context", BIG).stdout.splitlines()[0]
    assert first.startswith("Context at 3669433b  model ") and first.endswith("estimate of every message)")


@pytest.mark.parametrize("width", WIDTHS)
def test_tree_lines_are_cut_with_an_ellipsis(run: Run, width: int) -> None:
    lines = run("tree", BIG, "--width", str(width)).stdout.splitlines()
    assert all(cell_len(line) <= width for line in lines)
    assert any(line.endswith("…") for line in lines)


def test_tree_depth(run: Run) -> None:
    whole = run("tree", BIG, "--no-ids").stdout.splitlines()
    data = json.loads(run("tree", BIG, "--format", "json").stdout)
    assert whole[1].startswith(f"{len(whole) - 2:,} of 578 entries shown")
    trunk = run("tree", BIG, "--depth", "0").stdout.splitlines()
    assert trunk[1].startswith("10 of 578 entries shown · filter default · --depth 0 (441 deeper left out)")
    assert len(trunk) == 2 + 10 + 1
    assert trunk[-1].endswith("├⊟ … 441 entries deeper (the leaf among them)")
    # The trunk is the root's linear run, as the JSON nests it.
    assert [line.split()[0] for line in trunk[2:12]] == [data["roots"][0]["id"]] + [
        e["id"] for e in data["roots"][0]["chain"]
    ]
    one = run("tree", BIG, "--depth", "1").stdout.splitlines()
    notes = [line for line in one if "entries deeper" in line]
    shown = int(one[1].split()[0])
    hidden = sum(int(line.split("… ")[1].split()[0].replace(",", "")) for line in notes)
    assert shown + hidden == len(whole) - 2
    run("tree", BIG, "--depth", "-1", exit_code=2)
    assert "--depth shapes the human tree" in run("tree", BIG, "--depth", "1", "--format", "json", exit_code=2).stderr


UNSET = "<unset>"


class Tty(io.StringIO):
    """A terminal's stdout, as far as pitools can tell."""

    def isatty(self) -> bool:
        return True


def _tree_on_a_tty(tmp_path: Path, *args: str, **environ: str) -> tuple[int, str, Path]:
    paged = tmp_path / "paged.txt"
    stdout, stderr = Tty(), io.StringIO()
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "100", "NO_COLOR": "1", **environ}
    env.setdefault("PITOOLS_PAGER", f"cat > {shlex.quote(str(paged))}; printf '%s' \"$LESS\" > {paged}.less")
    env = {k: v for k, v in env.items() if v != UNSET}
    status = main(["tree", str(BIG), *args], Environment(stdout=stdout, stderr=stderr, environ=env))
    assert stderr.getvalue() == ""
    return status, stdout.getvalue(), paged


def test_tree_on_a_terminal_goes_through_the_pager(tmp_path: Path, run: Run) -> None:
    status, direct, paged = _tree_on_a_tty(tmp_path)
    assert status == 0 and direct == ""
    text = paged.read_text()
    assert text.startswith("Session tree · (no name)\n") and len(text.splitlines()) == 453
    assert all(cell_len(line) <= 100 for line in text.splitlines())  # the terminal's width, not a pipe's
    assert Path(f"{paged}.less").read_text() == "FRX"


def test_pager_keeps_the_users_less_and_obeys_no_pager(tmp_path: Path) -> None:
    status, direct, paged = _tree_on_a_tty(tmp_path, LESS="-S")
    assert status == 0 and Path(f"{paged}.less").read_text() == "-S"
    paged.unlink()
    status, direct, paged = _tree_on_a_tty(tmp_path, "--no-pager")
    assert status == 0 and direct.startswith("Session tree") and not paged.exists()
    status, direct, paged = _tree_on_a_tty(tmp_path, PITOOLS_PAGER="cat")
    assert status == 0 and direct.startswith("Session tree") and not paged.exists()
    status, direct, paged = _tree_on_a_tty(tmp_path, TERM="dumb")
    assert status == 0 and direct.startswith("Session tree") and not paged.exists()


def test_pager_from_pager_variable_and_never_in_a_pipe(tmp_path: Path, run: Run) -> None:
    out = tmp_path / "via-pager.txt"
    status, direct, _ = _tree_on_a_tty(tmp_path, PITOOLS_PAGER=UNSET, PAGER=f"cat > {out}")
    assert status == 0 and direct == "" and out.read_text().startswith("Session tree")
    out.unlink()
    # Set but empty, PITOOLS_PAGER turns paging off (as GIT_PAGER= does), whatever PAGER says.
    status, direct, _ = _tree_on_a_tty(tmp_path, PITOOLS_PAGER="", PAGER=f"cat > {out}")
    assert status == 0 and direct.startswith("Session tree") and not out.exists()
    piped = run("tree", BIG, env={"PITOOLS_PAGER": f"cat > {tmp_path / 'never.txt'}"}).stdout
    assert piped.startswith("Session tree") and not (tmp_path / "never.txt").exists()


def test_pager_that_quits_early_is_a_closed_pipe(tmp_path: Path) -> None:
    status, direct, _ = _tree_on_a_tty(tmp_path, PITOOLS_PAGER="head -c 10 > /dev/null")
    assert status == 0 and direct == ""
