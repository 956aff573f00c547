"""The viewer on a larger generated session: the tree is virtual (few rows in the DOM, every
entry reachable by scrolling), the transcript comes in windows, and navigation still works."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests import support
from tests.browser import CHROMIUM, Browser
from tests.viewer.test_viewer_page import write_page

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    gen_big = support.load_script("gen_big")
    folder = tmp_path_factory.mktemp("scale")
    session = folder / "big.jsonl"
    session.write_bytes(gen_big.generate(3, 5, "chatty"))
    ids = [json.loads(line)["id"] for line in session.read_text(encoding="utf-8").splitlines()[1:]]
    yield write_page(session, folder / "big.html"), ids


def test_the_tree_is_virtual_and_holds_every_entry(page: tuple[Path, list[str]]) -> None:
    html, ids = page
    assert len(ids) > 1500
    with Browser() as b:
        b.open(html.as_uri())
        rows = b.eval("document.querySelectorAll('#tree [data-tree-id]').length")
        assert 0 < rows <= 140  # the rows in view and a margin, not one per entry
        state = b.state()
        assert sorted(state["tree"]) == sorted(ids)  # every entry has its row, scrolled to
        assert state["rowModel"] == state["tree"]  # drawn in the row model's order
        assert state["domRows"] <= 140
        # The transcript drew the end of the path first; the state asked for the rest.
        path = state["transcript"]
        assert path[-1] == ids[-1] and len(path) > 200

        # Keyboard: Home selects the first row, End the last; the selected row is drawn.
        b.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Home'}))")
        first = b.eval("document.querySelector('#tree .row.selected').dataset.treeId")
        assert b.eval("location.hash") == "#leaf=" + quote(first, safe="")
        b.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'End'}))")
        assert b.eval("document.querySelector('#tree .row.selected') !== null")

        # A deep entry by #leaf=: selected, its row drawn and in view, its path the transcript.
        deep = ids[len(ids) // 2]
        b.open(f"{html.as_uri()}?deep#leaf={quote(deep, safe='')}")
        assert b.eval("document.querySelector('#tree .row.selected').dataset.treeId") == deep
        in_view = b.eval(
            """(() => { const t = document.getElementById('tree').getBoundingClientRect();
              const r = document.querySelector('#tree .row.selected').getBoundingClientRect();
              return r.top >= t.top && r.bottom <= t.bottom; })()"""
        )
        assert in_view
        assert b.eval("Array.from(document.querySelectorAll('#transcript article')).pop().dataset.entryId") == deep

        # Search (over every entry, parsed for it) narrows the row model: an id finds its entry;
        # the selected row always stays.
        other = ids[len(ids) // 3]
        b.eval(
            f"(() => {{ const s = document.getElementById('search'); s.value = '{other}';"
            " s.dispatchEvent(new Event('input')); })()"
        )
        b.wait_for("window.pitoolsViewer.rowIds().length < 10")
        assert sorted(b.eval("window.pitoolsViewer.rowIds()")) == sorted([other, deep])
        assert (
            b.eval("Array.from(document.querySelectorAll('#tree [data-tree-id]'), r => r.dataset.treeId)").count(other)
            == 1
        )
