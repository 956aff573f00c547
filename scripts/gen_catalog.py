#!/usr/bin/env python3
"""Write pitools' one copy of Pi 1.6.0's model catalogue, and Pi's ``models.json`` schema.

Outputs (generated, never edited; ``make generate`` runs this):

* ``pitools/data/model_catalog.jsonl``: line 1 describes the source (pi-ai version and the
  catalogue's ``generatedAt``, which Pi compares with a cached pi.dev catalogue's
  ``lastModified``); every other line is one chat model of pi-ai's ``dist/providers/data/<provider>.json``
  in file order (``flattenChatModelCatalog``: a later duplicate id replaces an earlier one), with
  its context window and output cap (settings); models of the providers the summarizer supports
  (``summarizerProviders`` on line 1) also carry API, base URL, reasoning, prices, thinking-level
  map, request-changing compat flags and headers.
* ``pitools/data/models.schema.json``: Pi's published JSON Schema for ``models.json``.
* ``pitools/data/model_catalog.fingerprint.json``: SHA-256 of the inputs and outputs above, so the
  freshness test can tell a hand-edited output from a generated one on machines without the
  reference.

Usage: scripts/gen_catalog.py [--check] [PI_AI_DIR [PI_CODING_AGENT_DIR]]
(default: the reference found as the tests find it: $PI_REF_DIR, a .pi-ref install, /work/main).
--check writes nothing and exits 1 when a committed file differs from a fresh generation.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "pitools" / "data"
CATALOG = DATA / "model_catalog.jsonl"
SCHEMA = DATA / "models.schema.json"
FINGERPRINT = DATA / "model_catalog.fingerprint.json"

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


def find_reference() -> tuple[Path, Path] | None:
    """(pi-ai, pi-coding-agent) package folders, or None."""
    from pi_reference import pi_ai_dir, pi_ref_dir  # scripts/: the script's own folder

    agent, ai = pi_ref_dir(), pi_ai_dir()
    return None if agent is None or ai is None else (ai, agent)


def _slim(provider: str, model: dict[str, Any]) -> dict[str, Any]:
    if provider not in CATALOG_PROVIDERS:  # settings need only the limits
        return {
            "provider": provider,
            "id": model["id"],
            "contextWindow": model["contextWindow"],
            "maxTokens": model["maxTokens"],
        }
    out: dict[str, Any] = {
        "provider": provider,
        "id": model["id"],
        "api": model.get("api"),
        "baseUrl": model.get("baseUrl"),
        "contextWindow": model["contextWindow"],
        "maxTokens": model["maxTokens"],
        "reasoning": bool(model.get("reasoning", False)),
        "cost": model.get("cost"),
    }
    if model.get("thinkingLevelMap"):
        out["thinkingLevelMap"] = model["thinkingLevelMap"]
    compat = {k: v for k, v in (model.get("compat") or {}).items() if k in KEPT_COMPAT}
    if compat:
        out["compat"] = compat
    if model.get("headers"):
        out["headers"] = model["headers"]
    # What else shapes a request body (`pitools request`): image input, every compat flag, and
    # sampling parameters. Kept apart from `compat` so the summarizer's flags stay what they were.
    out["input"] = model.get("input", ["text"])
    if model.get("compat"):
        out["requestCompat"] = model["compat"]
    for key in ("samplingParams", "samplingParamsByThinkingLevel", "inputLimits"):
        if model.get(key):
            out[key] = model[key]
    return out


def _provider_files(data_dir: Path) -> list[Path]:
    return sorted(p for p in data_dir.glob("*.json") if not p.name.startswith("."))


def _inputs(pi_ai: Path, agent: Path) -> list[Path]:
    data_dir = pi_ai / "dist" / "providers" / "data"
    files = [*_provider_files(data_dir), data_dir / ".manifest.json"]
    return [pi_ai / "package.json", *files, agent / "schemas" / "models.schema.json"]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render(pi_ai: Path, agent: Path) -> dict[Path, bytes]:
    """Every output file's exact bytes."""
    data_dir = pi_ai / "dist" / "providers" / "data"
    manifest = json.loads((data_dir / ".manifest.json").read_text(encoding="utf-8"))
    version = json.loads((pi_ai / "package.json").read_text(encoding="utf-8"))["version"]
    lines = [
        json.dumps(
            {
                "source": f"@earendil-works/pi-ai {version} dist/providers/data (chat models)",
                "generatedAt": manifest["generatedAt"],
                # Every built-in provider, also those without a chat model (Pi still knows them).
                "providers": [p.stem for p in _provider_files(data_dir)],
                "summarizerProviders": list(CATALOG_PROVIDERS),
            },
            ensure_ascii=False,
        )
    ]
    for path in _provider_files(data_dir):
        groups = json.loads(path.read_text(encoding="utf-8"))
        for group in groups.values():
            for model in group.values():
                if model.get("type") == "chat":
                    lines.append(json.dumps(_slim(path.stem, model), separators=(",", ":"), ensure_ascii=False))
    catalog = ("\n".join(lines) + "\n").encode("utf-8")
    schema = (agent / "schemas" / "models.schema.json").read_bytes()
    inputs = hashlib.sha256()
    for path in _inputs(pi_ai, agent):
        inputs.update(path.name.encode() + b"\0" + _sha(path.read_bytes()).encode() + b"\n")
    fingerprint = {
        "generator": "scripts/gen_catalog.py",
        "piAiVersion": version,
        "inputsSha256": inputs.hexdigest(),
        "outputs": {p.name: _sha(b) for p, b in ((CATALOG, catalog), (SCHEMA, schema))},
    }
    return {
        CATALOG: catalog,
        SCHEMA: schema,
        FINGERPRINT: (json.dumps(fingerprint, indent=2) + "\n").encode("utf-8"),
    }


def committed_matches_fingerprint() -> list[str]:
    """Outputs whose committed bytes are not the ones the generator recorded (hand edits)."""
    recorded = json.loads(FINGERPRINT.read_text(encoding="utf-8"))["outputs"]
    return [name for name, sha in recorded.items() if _sha((DATA / name).read_bytes()) != sha]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    if args:
        pi_ai = Path(args[0])
        agent = Path(args[1]) if len(args) > 1 else pi_ai.parent / "pi-coding-agent"
    else:
        found = find_reference()
        if found is None:
            print("gen_catalog: the Pi reference was not found (set PI_REF_DIR); nothing done", file=sys.stderr)
            return 0 if check else 1
        pi_ai, agent = found
    outputs = render(pi_ai, agent)
    stale = [p for p, data in outputs.items() if not p.exists() or p.read_bytes() != data]
    if check:
        for path in stale:
            print(f"gen_catalog: {path.relative_to(ROOT)} is stale: run make generate", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(outputs[path])
        os.replace(tmp, path)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
