"""pi-ai's output-budget rules (``clampMaxTokensToContext``, ``adjustMaxTokensForThinking``):
one implementation (the request mirror's), equal to pi-ai 1.6.0 on a recorded grid, and the
summarizer's budget computed by it.

``pi_ai_budget.json`` is pi-ai's own output (``pi_ai_budget.mjs`` run on the installed package);
when node and the reference are here, the recording is checked against a fresh run too.
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pitools.core.request.simple_options import adjust_max_tokens_for_thinking, clamp_max_tokens_to_context
from pitools.summarize.body import build_body
from pitools.summarize.types import ModelSpec, SummaryRequest
from tests import support

HERE = Path(__file__).resolve().parent
RECORDED = json.loads((HERE / "pi_ai_budget.json").read_text(encoding="utf-8"))


def _messages(context: dict[str, Any]) -> list[dict[str, Any]]:
    if "repeat" in context:
        char, n = context["repeat"]
        return [{"role": "user", "content": [{"type": "text", "text": char * n}], "timestamp": 0}]
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": context["usage"]}
    return [{"role": "assistant", "content": [], "usage": usage, "stopReason": "stop", "timestamp": 0}]


def test_the_recording_is_pi_ai_1_6_0() -> None:
    assert RECORDED["piAi"] == "1.6.0"
    assert len(RECORDED["clamp"]) == 270 and len(RECORDED["adjust"]) == 120


@pytest.mark.parametrize("case", RECORDED["clamp"], ids=lambda c: f"w{c['window']}-c{c['cap']}-{c['context']}")
def test_clamp_equals_pi_ai(case: dict[str, Any]) -> None:
    got = clamp_max_tokens_to_context({"contextWindow": case["window"]}, _messages(case["context"]), case["cap"])
    assert got == case["maxTokens"]


@pytest.mark.parametrize("case", [c for c in RECORDED["clamp"] if "repeat" in c["context"]], ids=str)
def test_the_summarizer_budget_is_pi_ais_clamp(case: dict[str, Any]) -> None:
    """A summary request (the prompt as Pi's one user message, no system prompt) gets pi-ai's cap."""
    char, n = case["context"]["repeat"]
    fields = {"provider": "p", "model_id": "m", "api": "anthropic-messages"}
    spec = ModelSpec.model_validate({**fields, "context_window": case["window"], "max_tokens": case["cap"]})
    request = SummaryRequest(prompt=char * n)  # type: ignore[call-arg]
    assert build_body(spec, request)["max_tokens"] == case["maxTokens"]


@pytest.mark.parametrize("case", RECORDED["adjust"], ids=lambda c: f"{c['base']}-{c['modelMax']}-{c['level']}")
def test_adjust_for_thinking_equals_pi_ai(case: dict[str, Any]) -> None:
    got = adjust_max_tokens_for_thinking(case["base"], case["modelMax"], case["level"])
    assert got == (case["maxTokens"], case["thinkingBudget"])


def test_the_recording_matches_a_fresh_run_of_pi_ai() -> None:
    node, pi_ai = support.node(), support.pi_ai_dir()
    if node is None or pi_ai is None:
        pytest.skip("needs node and the pi-ai reference")
    fresh = subprocess.run(
        [node, str(HERE / "pi_ai_budget.mjs"), str(pi_ai)], capture_output=True, check=True, timeout=120
    )
    assert json.loads(fresh.stdout) == RECORDED


#: pi-ai's budget functions and constants; defined anywhere else, they are a second copy of its rules.
_BUDGET_NAMES = {
    "clamp_max_tokens_to_context", "adjust_max_tokens_for_thinking", "thinking_budget", "context_safety_tokens",
    "context_safety_ratio", "min_output_with_ratio_margin", "thinking_budgets", "default_thinking_budgets",
}  # fmt: skip


def test_one_copy_of_the_budget_rules() -> None:
    """Only the request mirror defines pi-ai's clamp and thinking-budget functions or their constants."""
    offenders = []
    for path in sorted((support.ROOT / "pitools").rglob("*.py")):
        where = path.relative_to(support.ROOT / "pitools").as_posix()
        if where == "core/request/simple_options.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_level = set(ast.iter_child_nodes(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                names = [node.name]
            elif isinstance(node, ast.Assign) and node in module_level:
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            else:
                continue
            if any(name.lstrip("_").lower() in _BUDGET_NAMES for name in names):
                offenders.append(f"{where}:{node.lineno}")
    assert offenders == []
