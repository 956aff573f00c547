"""``getSessionStats`` and ``getUsageCostBreakdown`` on Pi's entries, against Pi's own results."""

from __future__ import annotations

import pytest

from pitools.core.js.json.encode import jsonable
from pitools.core.parity import diff_values
from pitools.core.views.stats import session_stats, usage_breakdown
from pitools.errors import PiCrashError
from tests.support import golden_cases, golden_recording, recording_outline

CASES = [c for c in golden_cases() if isinstance(recording_outline(c).get("stats"), dict)]


@pytest.mark.parametrize("case", CASES)
def test_session_stats(case: str) -> None:
    pi = golden_recording(case)
    if "error" in pi["stats"]:  # Pi threw: so must pitools
        with pytest.raises(PiCrashError):
            session_stats(pi["entries"])
        return
    ours = jsonable(session_stats(pi["entries"]).to_json())
    expected = {k: v for k, v in pi["stats"].items() if k != "sessionId"}
    assert diff_values({k: v for k, v in ours.items() if k != "sessionId"}, expected) == []


@pytest.mark.parametrize("case", CASES)
def test_usage_breakdown(case: str) -> None:
    pi = golden_recording(case)
    if not isinstance(pi.get("usageBreakdown"), list):  # Pi threw: so must pitools
        with pytest.raises(PiCrashError):
            usage_breakdown(pi["entries"])
        return
    assert diff_values(jsonable(usage_breakdown(pi["entries"])), pi["usageBreakdown"]) == []
