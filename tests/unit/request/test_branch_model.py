"""``branch_model``: the model Pi resumes a session with at a leaf (``request`` without ``--model``).

Expected values are what Pi 1.6.0's ``getBranchSelection`` returns on the branch that
``SessionManager.getBranch(leaf)`` gives for these golden sessions (run once with node).
"""

from __future__ import annotations

import pytest

from pitools.core.request.build import branch_model
from pitools.core.session.load import load
from tests import support

# (case, leaf or None for Pi's default leaf, Pi's answer)
PI = [
    ("request-wedges", None, "anthropic/claude-opus-4-7"),
    ("request-wedges", "e030", "openai/gpt-5"),
    ("request-wedges", "e008", "anthropic/claude-sonnet-4-5"),
    ("request-wedges", "e006", "openai-codex/gpt-5.3-codex"),
    ("request-wedges", "e002", "openai-codex/gpt-5.3-codex"),
    ("request-wedges", "e001", None),
    ("request-handoff", None, "anthropic/claude-sonnet-4-5"),
]


@pytest.mark.parametrize(("case", "leaf", "expected"), PI)
def test_the_model_pi_resumes_with(case: str, leaf: str | None, expected: str | None) -> None:
    loaded = load(str(support.golden_session(case)))
    assert branch_model(loaded.index, loaded.leaf(leaf)) == expected
