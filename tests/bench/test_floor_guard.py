"""The rules of issue 39's regression guard (``scripts/floor_guard.py``): a ratio to the parse floor
that grew more than the tolerance over the baseline is named, and so is a human view dearer than
1.3 times its JSON. The guard itself runs in ``make check`` after the tests (``make floor-guard``),
alone on the machine: beside the test workers its timings are not steady enough to judge by.
"""

from __future__ import annotations

from tests import support

ROOT = support.ROOT
BASELINE = ROOT / "bench" / "floor-ratios.json"


def test_compare_names_each_ratio_that_grew_past_the_tolerance() -> None:
    fg = support.load_script("floor_guard")
    base = {"never": {"context json": 10.0, "context human": 11.0}}
    assert fg.compare({"never": {"context json": 11.9, "context human": 11.0, "floor ms": 5}}, base, 0.2) == []
    worse = fg.compare({"never": {"context json": 12.1, "context human": 11.0}}, base, 0.2)
    assert worse == ["never / context json: 12.10x the floor, baseline 10.00x (+21%)"]
    assert fg.human_over_json({"s": {"x json": 2.0, "x human": 2.5}}, 1.3) == []
    over = fg.human_over_json({"s": {"x json": 2.0, "x human": 2.7}}, 1.3)
    assert over == ["s / x human: 1.35x its JSON (target 1.3x)"]


def test_attempts_judge_each_ratio_by_its_best() -> None:
    # --attempts N: a ratio slow in one attempt only (a busy moment) passes; one slow in every
    # attempt (a regression) is still named.
    fg = support.load_script("floor_guard")
    base = {"never": {"context json": 10.0, "inspect json": 8.0}}
    first = {"never": {"context json": 13.0, "inspect json": 8.1, "floor ms": 5.0}}
    second = {"never": {"context json": 10.5, "inspect json": 10.4, "floor ms": 6.0}}
    assert fg.compare(first, base, 0.2) and fg.compare(second, base, 0.2)  # each attempt alone fails
    kept = fg.best_of(fg.best_of({}, first), second)
    assert kept == {"never": {"context json": 10.5, "inspect json": 8.1, "floor ms": 6.0}}
    assert fg.compare(kept, base, 0.2) == []
    regressed = {"never": {"context json": 12.5, "inspect json": 8.0}}
    kept = fg.best_of(fg.best_of({}, first), regressed)
    assert fg.compare(kept, base, 0.2) == ["never / context json: 12.50x the floor, baseline 10.00x (+25%)"]
