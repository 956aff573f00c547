"""Every generated file is what its generator (``make generate``) writes today.

The model catalogue is regenerated from the Pi reference when it is on this machine; without it
the committed files are checked against the fingerprint the generator recorded, so a hand edit
fails everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import load_script, pi_ai_dir, pi_ref_dir

gen_schema = load_script("gen_schema")
gen_catalog = load_script("gen_catalog")


def test_session_schema_and_entry_check_are_fresh() -> None:
    assert gen_schema.main(["--check"]) == 0, "run make generate"


def test_catalogue_matches_its_fingerprint() -> None:
    assert gen_catalog.committed_matches_fingerprint() == [], "a generated catalogue file was edited: make generate"


def test_catalogue_is_fresh_from_the_reference() -> None:
    agent, ai = pi_ref_dir(), pi_ai_dir()
    if agent is None or ai is None:
        pytest.skip("the Pi reference is not on this machine; the fingerprint test covers the committed files")
    outputs = gen_catalog.render(ai, agent)
    stale = [p.name for p, data in outputs.items() if p.read_bytes() != data]
    assert stale == [], "run make generate"


def test_fingerprint_check_catches_an_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("model_catalog.jsonl", "models.schema.json", "model_catalog.fingerprint.json"):
        (data / name).write_bytes((gen_catalog.DATA / name).read_bytes())
    monkeypatch.setattr(gen_catalog, "DATA", data)
    monkeypatch.setattr(gen_catalog, "FINGERPRINT", data / "model_catalog.fingerprint.json")
    assert gen_catalog.committed_matches_fingerprint() == []
    catalog = data / "model_catalog.jsonl"
    catalog.write_bytes(catalog.read_bytes().replace(b'"contextWindow":200000', b'"contextWindow":200001', 1))
    assert gen_catalog.committed_matches_fingerprint() == ["model_catalog.jsonl"]


def test_catalogue_header_names_its_source() -> None:
    header = json.loads((gen_catalog.CATALOG).read_text(encoding="utf-8").splitlines()[0])
    assert header["source"].startswith("@earendil-works/pi-ai 1.6.0")
    assert "anthropic" in header["summarizerProviders"]
