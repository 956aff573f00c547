"""Regenerate ``_catalog_data.py`` from the model catalogue shipped with pi-ai.

Usage (from the repository root)::

    python -m pitools.summarize.catalog_build \\
        /path/to/node_modules/@earendil-works/pi-ai/dist/providers/data

Only the fields the summarizer needs are kept (context window, output cap, reasoning
support, prices, thinking-level map and the few compat flags that change the request),
one model per line, so a catalogue update shows up as a readable diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: Providers whose models we ship metadata for: the common hosted ones that speak, or can be
#: reached through, one of the two wire protocols pitools implements. OpenRouter is left out on
#: purpose: Pi itself refreshes that list per key at runtime, so a static copy would be stale and
#: it alone would triple the file; unknown OpenRouter models fall back to Pi's defaults.
CATALOG_PROVIDERS = (
    "anthropic",
    "openai",
    "google",
    "mistral",
    "groq",
    "xai",
    "deepseek",
    "cerebras",
    "together",
    "fireworks",
    "moonshotai",
    "moonshotai-cn",
    "zai",
    "zai-coding-cn",
    "nvidia",
    "minimax",
    "minimax-cn",
    "kimi-coding",
    "xiaomi",
    "ant-ling",
)

#: Compat flags that influence a plain, tool-less, non-streaming summary request.
KEPT_COMPAT = (
    "forceAdaptiveThinking",
    "maxTokensField",
    "supportsReasoningEffort",
    "thinkingFormat",
    "supportsDeveloperRole",
    "supportsTemperature",
)

OUTPUT = Path(__file__).with_name("_catalog_data.py")

HEADER = '''"""Model metadata extracted from pi-ai 1.6.0 (providers/data/*.json). Generated: do not edit.

Regenerate with ``python -m pitools.summarize.catalog_build <pi-ai>/dist/providers/data``.
Each line of ``CATALOG_JSONL`` is one chat model.
"""

from __future__ import annotations

CATALOG_JSONL = r"""
'''

FOOTER = '''"""
'''


def _slim(model: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "provider": model["provider"],
        "id": model["id"],
        "api": model["api"],
        "baseUrl": model["baseUrl"],
        "contextWindow": model["contextWindow"],
        "maxTokens": model["maxTokens"],
        "reasoning": bool(model.get("reasoning", False)),
        "cost": model["cost"],
    }
    if model.get("thinkingLevelMap"):
        out["thinkingLevelMap"] = model["thinkingLevelMap"]
    compat = {k: v for k, v in (model.get("compat") or {}).items() if k in KEPT_COMPAT}
    if compat:
        out["compat"] = compat
    if model.get("headers"):
        out["headers"] = model["headers"]
    return out


def build(data_dir: Path) -> str:
    """Return the text of ``_catalog_data.py`` for the catalogue in ``data_dir``."""
    lines: list[str] = []
    for provider in CATALOG_PROVIDERS:
        raw = json.loads((data_dir / f"{provider}.json").read_text(encoding="utf-8"))
        models = [m for group in raw.values() for m in group.values() if m.get("type", "chat") == "chat"]
        for model in sorted(models, key=lambda m: str(m["id"])):
            line = json.dumps(_slim(model), separators=(",", ":"), ensure_ascii=False)
            if '"""' in line:  # would end the raw string literal early
                raise ValueError(f"cannot embed model {model['id']!r}")
            lines.append(line)
    return HEADER + "\n".join(lines) + "\n" + FOOTER


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    OUTPUT.write_text(build(Path(argv[0])), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
