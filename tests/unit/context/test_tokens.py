"""``estimateTokens`` per message, on Pi's own context messages, against Pi's own estimates.

Input and expected values both come from the recordings (``context.messages`` and
``tokenEstimates``), so this tests core/context/tokens.py alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from pitools.core.context.tokens import calculate_context_tokens, estimate_tokens, nan_to_none, sum_tokens
from tests.support import LAZY, recorded_leaves

LEAVES = recorded_leaves(where=lambda record, view: isinstance(view.get("tokenEstimates"), list))


@pytest.mark.parametrize(("case", "leaf", "record", "view"), LEAVES, indirect=LAZY)
def test_estimate_tokens_per_message(case: str, leaf: str, record: Any, view: dict[str, Any]) -> None:
    messages = view["context"]["messages"]
    ours = [nan_to_none(estimate_tokens(m)) for m in messages]
    assert ours == view["tokenEstimates"]


def test_sum_and_usage_arithmetic() -> None:
    # calculateContextTokens: totalTokens when truthy, else the four parts added.
    assert calculate_context_tokens({"totalTokens": 50, "input": 1, "output": 2}) == 50
    assert calculate_context_tokens({"totalTokens": 0, "input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4}) == 10
    assert sum_tokens([{"role": "user", "content": "abcd"}, {"role": "user", "content": "abcdefgh"}]) == 3


def test_chars_over_four_rounds_up() -> None:
    # Pi: Math.ceil(chars / 4) over the text it counts.
    assert estimate_tokens({"role": "user", "content": "a"}) == 1
    assert estimate_tokens({"role": "user", "content": "abcde"}) == 2
    assert estimate_tokens({"role": "user", "content": [{"type": "text", "text": "abcd"}]}) == 1
