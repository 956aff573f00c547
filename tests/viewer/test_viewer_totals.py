"""The viewer's context total at ANY selected entry (not only at leaves) is Pi's figure.

Pi's ``estimateProjectedContextTokens`` with the selected entry as the leaf was recorded for
every entry of the golden sessions by ``scripts/record_viewer_totals.py`` (Pi 1.6.0 run by
``scripts/pi_entry_totals.mjs``) into ``fixtures/pi_entry_totals.json.gz``. Each page is opened
once and entries are selected through the page's own ``select`` (what a click does); the total
it shows must be exact (``data-exact="true"``) and equal Pi's.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import support
from tests.browser import CHROMIUM, Browser
from tests.viewer.test_viewer_page import EVERY, _cases, write_page

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")

FIXTURE = Path(__file__).parent / "fixtures" / "pi_entry_totals.json.gz"
#: Entries checked per session (spread over the file; all of them in smaller sessions).
PER_SESSION = 40

SELECT_ALL = """((ids) => ids.map(id => {
  if (!window.pitoolsViewer.select(id)) return [id, null, null];
  const total = document.getElementById('ctx-total');
  return [id, Number(total.dataset.tokens), total.dataset.exact === 'true'];
}))(%s)"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


@pytest.mark.parametrize("every", EVERY)
def test_totals_at_every_kind_of_entry_equal_pis(browser: Browser, tmp_path: Path, every: int) -> None:
    from pitools.errors import PitoolsError

    recorded = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    leaves_by_case = {case: set(support.golden_recording(case).get("leaves") or []) for case in _cases()}
    compared = non_leaf = sessions = 0
    failures: list[str] = []
    for case in _cases()[::every]:
        pi = recorded.get(case)
        if not pi:
            continue
        try:
            page = write_page(support.golden_session(case), tmp_path / f"{case}.html")
        except PitoolsError:
            continue
        # An empty id is no leaf to Pi (it falls back to its default), so Pi cannot be asked about
        # the entry the page selects by it.
        ids = [i for i, v in pi.items() if isinstance(v, int) and i]
        if len(ids) > PER_SESSION:
            step = len(ids) / PER_SESSION
            ids = [ids[int(k * step)] for k in range(PER_SESSION)]
        browser.open(page.as_uri())
        sessions += 1
        for eid, tokens, exact in browser.eval(SELECT_ALL % json.dumps(ids), timeout=300):
            if tokens is None:
                continue  # an id the page does not know (Pi gave a migrated file new ids)
            if not exact:
                failures.append(f"{case} at {eid}: estimated ({tokens}), not exact")
            elif tokens != pi[eid]:
                failures.append(f"{case} at {eid}: {tokens} != Pi's {pi[eid]}")
            compared += 1
            non_leaf += eid not in leaves_by_case[case]
    assert not failures, f"{len(failures)} differences:\n" + "\n".join(failures[:30])
    print(f"compared {compared} entries ({non_leaf} not leaves) of {sessions} sessions")
    assert sessions >= 40 // every and compared >= 1500 // every and non_leaf >= 1000 // every, (
        sessions,
        compared,
        non_leaf,
    )
