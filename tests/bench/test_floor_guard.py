"""The regression guard of issue 39: no command on any session shape may drift more than 20 % away
from the parse floor (read the file, split its lines) against the committed baseline
(``bench/floor-ratios.json``), and no human view may cost more than 1.3 times its JSON.

Ratios of CPU times measured in one process, best of several interleaved rounds, so a busy or
slower machine moves both sides of each ratio. One re-measure is allowed before failing: a
neighbour's burst can still land on one side of a round. Re-record the baseline with
``scripts/floor_guard.py --record bench/floor-ratios.json`` when a change is meant to be slower.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "bench" / "floor-ratios.json"


def guard() -> ModuleType:
    spec = importlib.util.spec_from_file_location("floor_guard", ROOT / "scripts" / "floor_guard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_names_each_ratio_that_grew_past_the_tolerance() -> None:
    fg = guard()
    base = {"never": {"context json": 10.0, "context human": 11.0}}
    assert fg.compare({"never": {"context json": 11.9, "context human": 11.0, "floor ms": 5}}, base, 0.2) == []
    worse = fg.compare({"never": {"context json": 12.1, "context human": 11.0}}, base, 0.2)
    assert worse == ["never / context json: 12.10x the floor, baseline 10.00x (+21%)"]
    assert fg.human_over_json({"s": {"x json": 2.0, "x human": 2.5}}, 1.3) == []
    over = fg.human_over_json({"s": {"x json": 2.0, "x human": 2.7}}, 1.3)
    assert over == ["s / x human: 1.35x its JSON (target 1.3x)"]


@pytest.mark.slow
def test_every_shape_stays_near_the_parse_floor(tmp_path_factory: pytest.TempPathFactory) -> None:
    # In a process of its own, as the baseline was recorded: inside pytest the collector's many
    # objects make every garbage collection of a full load dearer (+25 % measured).
    data = tmp_path_factory.getbasetemp() / "floor-guard-data"
    argv = [sys.executable, str(ROOT / "scripts" / "floor_guard.py"), "--check", str(BASELINE), "--data", str(data)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = []
    for _attempt in range(2):
        run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        runs.append(run.stdout + run.stderr)
        if run.returncode == 0:
            break
    assert run.returncode == 0, "\n".join(runs)
