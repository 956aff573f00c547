"""``export --format otlp`` attribute names against the published GenAI semantic conventions.

The definitions come from the ``opentelemetry-semantic-conventions`` package (dev dependency):
its ``gen_ai_attributes`` module lists every ``gen_ai.*`` attribute the conventions published
before they moved to their own repository, each with a docstring that says when a name was
replaced and by what. The export is read back through ``main()`` (OTLP/JSON on stdout).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

pytest.importorskip("opentelemetry.proto")
gen_ai = pytest.importorskip("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")

from pitools.core.views.otel import LEGACY_NAMES  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
SESSION = GOLDEN / "gen-s0000_v3" / "session.jsonl"
Run = Callable[..., Result]


def _published() -> dict[str, str]:
    """Every published ``gen_ai.*`` name -> its docstring (``Deprecated: Replaced by ...``)."""
    tree = ast.parse(Path(gen_ai.__file__).read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    body = tree.body
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Constant):
            value = node.value.value
            if isinstance(value, str) and value.startswith("gen_ai."):
                doc = body[i + 1] if i + 1 < len(body) else None
                text = doc.value.value if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) else ""
                names[value] = str(text)
    return names


PUBLISHED = _published()


def _replaced_by(name: str) -> str | None:
    match = re.search(r"Replaced by `([^`]+)`", PUBLISHED.get(name, ""))
    return match.group(1) if match else None


def _span_keys(run: Run, *extra: str) -> list[set[str]]:
    document = json.loads(run("export", str(SESSION), "--format", "otlp", "--all", *extra).stdout)
    spans = [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert spans
    return [{a["key"] for a in s["attributes"]} for s in spans]


def test_the_package_knows_the_names_this_test_relies_on() -> None:
    assert len(PUBLISHED) > 50
    assert _replaced_by("gen_ai.system") == "gen_ai.provider.name"
    assert "gen_ai.usage.cache_creation.input_tokens" in PUBLISHED


def test_current_names_are_published_and_none_is_replaced(run: Run) -> None:
    keys = set().union(*_span_keys(run))
    emitted = {k for k in keys if k.startswith("gen_ai.")}
    assert {"gen_ai.provider.name", "gen_ai.usage.cache_write.input_tokens"} <= emitted
    assert not emitted & set(LEGACY_NAMES.values())
    for name in emitted:
        # Published as it is, or the renamed form of a published name (cache_creation became
        # cache_write in the GenAI repository, after this package's last gen_ai release).
        old = LEGACY_NAMES.get(name, name)
        assert old in PUBLISHED, name
        assert _replaced_by(name) is None, f"{name} is replaced by {_replaced_by(name)}"


def test_every_old_name_is_the_published_predecessor(run: Run) -> None:
    for current, old in LEGACY_NAMES.items():
        assert old in PUBLISHED
        # The package names the replacement where it knew it; otherwise it is the documented rename.
        assert _replaced_by(old) in (current, None)


def test_legacy_option_writes_the_old_names_with_the_same_values(run: Run) -> None:
    now = json.loads(run("export", str(SESSION), "--format", "otlp").stdout)
    old = json.loads(run("export", str(SESSION), "--format", "otlp", "--otel-legacy-names").stdout)

    def spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]

    for a, b in zip(spans(now), spans(old), strict=True):
        renamed = [{**kv, "key": LEGACY_NAMES.get(kv["key"], kv["key"])} for kv in a["attributes"]]
        assert renamed == b["attributes"]
        keys = {kv["key"] for kv in b["attributes"]}
        assert "gen_ai.provider.name" not in keys
        assert ("gen_ai.system" in keys) == (b["name"].startswith(("chat", "invoke_agent")))
        assert all(k in PUBLISHED for k in keys if k.startswith("gen_ai."))


def test_legacy_names_with_all_branches_too(run: Run) -> None:
    for keys in _span_keys(run, "--otel-legacy-names"):
        assert "gen_ai.provider.name" not in keys and "gen_ai.usage.cache_write.input_tokens" not in keys


def test_legacy_option_is_only_for_otlp(run: Run) -> None:
    result = run("export", str(SESSION), "--format", "atif", "--otel-legacy-names", exit_code=2)
    assert "--otel-legacy-names is only for --format otlp" in result.stderr
