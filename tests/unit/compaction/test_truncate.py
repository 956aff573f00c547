"""``truncateForSummary``: at most N UTF-16 units of a tool result, never half a character."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.compaction.prepare import truncate_for_summary


def _units(s: str) -> list[int]:
    b = s.encode("utf-16-le", "surrogatepass")
    return [b[i] | b[i + 1] << 8 for i in range(0, len(b), 2)]


def _model(text: str, max_units: int) -> list[int]:
    """Pi's rule on code units: keep the first max_units (one fewer when that splits a pair)."""
    units = _units(text)
    if len(units) <= max_units:
        return units
    end = max(0, max_units)
    if 0 < end < len(units) and 0xD800 <= units[end - 1] <= 0xDBFF and 0xDC00 <= units[end] <= 0xDFFF:
        end -= 1
    return units[:end] + _units(f"\n\n[... {len(units) - max_units} more characters truncated]")


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", "é", "Ā", "😀", "\ud83d", "\ude00", "\n"]), max_size=40),
    st.integers(min_value=-1, max_value=30),
)
def test_truncate_for_summary_counts_utf16_units(text: str, max_units: int) -> None:
    assert _units(truncate_for_summary(text, max_units)) == _model(text, max_units)
