"""Parity with Pi 1.6.0: every golden session, every leaf, three keepRecentTokens settings.

The expected values are the reference oracle's own output, recorded by ``make golden`` into
``golden/<case>/pi.krt<N>.json.xz``; nothing here is produced by pitools.
"""

from __future__ import annotations

import pytest

from pitools.core.compaction.prepare import CompactionSettings
from pitools.core.js.json.parse import parse_json_line
from pitools.core.parity import diff_values, oracle_view
from tests import support

GOLDEN = support.GOLDEN
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))
RECORDINGS = [(case, krt) for case in CASES for krt in (20000, 2000, 300)]


def load_recording(case: str, krt: int) -> dict:
    # The loader's parser: golden/hostile-deep-nesting nests deeper than orjson and json allow.
    value, _ = parse_json_line(support.recording_text(GOLDEN / case / f"pi.krt{krt}.json.xz"))
    return value


pytestmark = pytest.mark.usefixtures("cli_recursion_limit")


def test_corpus_is_recorded() -> None:
    assert len(CASES) >= 50
    missing = [f"{c}/pi.krt{k}.json.xz" for c, k in RECORDINGS if not (GOLDEN / c / f"pi.krt{k}.json.xz").exists()]
    assert not missing, f"run `make golden`: {missing[:5]}"


@pytest.mark.parametrize(("case", "krt"), RECORDINGS, ids=[f"{c}-krt{k}" for c, k in RECORDINGS])
def test_matches_pi(case: str, krt: int) -> None:
    expected = load_recording(case, krt)
    assert "error" not in expected or expected.get("error") not in ("crash", "timeout"), expected
    ours = oracle_view(GOLDEN / case / "session.jsonl", settings=CompactionSettings(keep_recent_tokens=krt))
    differences = diff_values(ours, expected)
    assert not differences, "\n".join(differences)
