"""Regenerate ``pitools/data/model_limits.json`` (and copy ``models.schema.json``) from Pi 1.6.0.

Usage, from the repository root::

    python scripts/gen_model_table.py [PI_AI_DIR [PI_CODING_AGENT_DIR]]

``PI_AI_DIR`` defaults to ``/work/scratch/node_modules/@earendil-works/pi-ai`` and
``PI_CODING_AGENT_DIR`` to its sibling ``pi-coding-agent``.

pi-ai keeps each built-in provider's catalogue in ``dist/providers/data/<provider>.json``: an
object of API groups, each mapping ``"<type>:<id>"`` to a model. A provider's built-in chat
models are the ``"type": "chat"`` entries of its file, flattened in file order and keyed by id
(``flattenChatModelCatalog`` in ``dist/model-catalog.js``; a later duplicate id would replace
an earlier one). We keep only what settings resolution needs: ``[contextWindow, maxTokens]``
per model, plus the catalogue's ``generatedAt`` (``.manifest.json``), which Pi compares with the
``lastModified`` of a cached pi.dev catalogue in ``models-store.json``.

``models.schema.json`` is Pi's published JSON Schema for ``models.json`` (generated from the same
TypeBox schema Pi validates with in ``core/model-config.js``). Pi drops the whole file when it
does not match, so pitools validates against the same schema.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "pitools" / "data"
DEFAULT_PI_AI = Path("/work/scratch/node_modules/@earendil-works/pi-ai")


def build_table(pi_ai: Path) -> dict[str, Any]:
    data_dir = pi_ai / "dist" / "providers" / "data"
    manifest = json.loads((data_dir / ".manifest.json").read_text(encoding="utf-8"))
    version = json.loads((pi_ai / "package.json").read_text(encoding="utf-8"))["version"]
    providers: dict[str, dict[str, list[Any]]] = {}
    for path in sorted(p for p in data_dir.glob("*.json") if not p.name.startswith(".")):
        groups = json.loads(path.read_text(encoding="utf-8"))
        models: dict[str, list[Any]] = {}
        for group in groups.values():
            for model in group.values():
                if model.get("type") == "chat":
                    models[model["id"]] = [model["contextWindow"], model["maxTokens"]]
        providers[path.stem] = models
    return {
        "source": f"@earendil-works/pi-ai {version} dist/providers/data (chat models)",
        "generatedAt": manifest["generatedAt"],
        "providers": providers,
    }


def main(argv: list[str]) -> int:
    pi_ai = Path(argv[1]) if len(argv) > 1 else DEFAULT_PI_AI
    agent = Path(argv[2]) if len(argv) > 2 else pi_ai.parent / "pi-coding-agent"
    DATA.mkdir(parents=True, exist_ok=True)
    table = build_table(pi_ai)
    # One provider per line keeps catalogue updates reviewable as diffs.
    lines = [
        "{",
        f'"source": {json.dumps(table["source"])},',
        f'"generatedAt": {json.dumps(table["generatedAt"])},',
        '"providers": {',
    ]
    items = list(table["providers"].items())
    for index, (provider, models) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        lines.append(f"{json.dumps(provider)}: {json.dumps(models, separators=(',', ':'))}{comma}")
    lines += ["}", "}"]
    (DATA / "model_limits.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copyfile(agent / "schemas" / "models.schema.json", DATA / "models.schema.json")
    count = sum(len(models) for models in table["providers"].values())
    print(f"wrote {count} models from {len(items)} providers to {DATA / 'model_limits.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
