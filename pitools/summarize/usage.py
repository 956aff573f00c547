"""Pi's usage record: token counts plus their cost, in the JSON shape Pi stores.

Mirrors ``calculateCost`` (pi-ai ``models.ts``) and ``combineUsage`` (pi-coding-agent
``usage-totals.ts``). Shape::

    {"input", "output", "cacheRead", "cacheWrite", "totalTokens",
     "cost": {"input", "output", "cacheRead", "cacheWrite", "total"}}

Whole-number amounts are returned as ``int`` so JSON output matches JavaScript's
(``0`` rather than ``0.0``).
"""

from __future__ import annotations

from typing import Any

from pitools.summarize.types import ModelCost


def _num(value: float) -> float | int:
    """A whole float as int, so it serialises like a JavaScript number."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def token_count(value: object) -> int:
    """A token count from a provider's usage object: a positive integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def zero_usage() -> dict[str, Any]:
    """Usage of a call that used no tokens (the builtin summarizer)."""
    return make_usage(0, 0, 0, 0, None)


def calculate_cost(
    cost: ModelCost | None, *, input_: int, output: int, cache_read: int, cache_write: int
) -> dict[str, float | int]:
    """Prices the tokens like pi-ai's ``calculateCost``: the highest matching tier wins.

    Unknown prices (``cost is None``) cost nothing, as a ``models.json`` model without
    ``cost`` does in Pi.
    """
    if cost is None:
        return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    rate_in, rate_out, rate_cr, rate_cw = cost.input, cost.output, cost.cache_read, cost.cache_write
    prompt_tokens = input_ + cache_read + cache_write
    matched = -1.0
    for tier in cost.tiers:
        if prompt_tokens > tier.input_tokens_above and tier.input_tokens_above > matched:
            rate_in, rate_out, rate_cr, rate_cw = tier.input, tier.output, tier.cache_read, tier.cache_write
            matched = tier.input_tokens_above
    # Same operation order as the JavaScript so floating-point results agree bit for bit.
    # Pi's 1-hour cache-write split never applies here: summaries are sent without caching.
    c_in = (rate_in / 1000000) * input_
    c_out = (rate_out / 1000000) * output
    c_cr = (rate_cr / 1000000) * cache_read
    c_cw = (rate_cw * cache_write + rate_in * 2 * 0) / 1000000
    total = c_in + c_out + c_cr + c_cw
    return {
        "input": _num(c_in),
        "output": _num(c_out),
        "cacheRead": _num(c_cr),
        "cacheWrite": _num(c_cw),
        "total": _num(total),
    }


def make_usage(input_: int, output: int, cache_read: int, cache_write: int, cost: ModelCost | None) -> dict[str, Any]:
    """A Pi usage dict for these token counts, priced with ``cost``."""
    return {
        "input": input_,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input_ + output + cache_read + cache_write,
        "cost": calculate_cost(cost, input_=input_, output=output, cache_read=cache_read, cache_write=cache_write),
    }


def combine_usage(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Sum two usage dicts, as Pi does for a split turn's history + turn-prefix summaries."""
    keys = ("input", "output", "cacheRead", "cacheWrite")
    return {
        **{k: first[k] + second[k] for k in keys},
        "totalTokens": first["totalTokens"] + second["totalTokens"],
        "cost": {k: _num(first["cost"][k] + second["cost"][k]) for k in (*keys, "total")},
    }
