"""The planted-secrets corpus: scan finds every planted secret, redact leaves none, Pi still loads it.

``golden/secrets-planted`` holds fake secrets of 27 kinds in every kind of field
(scripts/make_secrets_corpus.py); ``golden/secrets-planted-redacted`` is its redaction with a fixed
key. Both were recorded through Pi 1.6.0 by the oracle (the conformance test compares pitools with
those recordings); here the two recordings are compared with each other: same tree, a context at
every leaf, and no planted value anywhere in what Pi built from the redacted file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pitools.core.secrets.detect import Detector, ExactValue
from pitools.core.secrets.redact import RedactOptions, Redactor
from pitools.core.secrets.scan import scan_lines
from tests import support

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "golden" / "secrets-planted"
REDACTED = ROOT / "golden" / "secrets-planted-redacted"
STRIPPED = ROOT / "golden" / "secrets-planted-stripped"  # also --paths --strip-images --strip-thinking
KEY = b"golden-secrets-key"  # scripts/make_secrets_corpus.py KEY

DATA = json.loads((PLANTED / "planted.json").read_text())
VALUES: dict[str, str] = DATA["values"]
GIVEN: list[str] = DATA["given"]


def detector() -> Detector:
    return Detector([ExactValue("given-value", v) for v in GIVEN])


def forms(value: str) -> set[bytes]:
    """Every way the value could sit in a JSON line: raw and JSON-escaped."""
    return {value.encode(), json.dumps(value)[1:-1].encode(), json.dumps(value, ensure_ascii=False)[1:-1].encode()}


def lines_of(case: Path) -> list[bytes]:
    return (case / "session.jsonl").read_bytes().splitlines(keepends=True)


def recording(case: Path, krt: int = 20000) -> dict:
    return json.loads(support.recording_text(case / f"pi.krt{krt}.json.xz"))


def test_corpus_plants_at_least_15_kinds() -> None:
    found = list(scan_lines(lines_of(PLANTED), detector(), file="s"))
    assert len({f.kind for f in found}) >= 15


def test_scan_finds_every_planted_secret() -> None:
    found = list(scan_lines(lines_of(PLANTED), detector(), file="s"))
    secrets = {f.secret.value for f in found}
    missing = [name for name, value in VALUES.items() if value not in secrets]
    assert not missing, missing
    assert len(found) == len(VALUES) + 1  # the GitHub token is planted twice (thinking, branch summary)


def test_some_secrets_are_split_by_escapes_in_the_input() -> None:
    data = (PLANTED / "session.jsonl").read_bytes()
    assert not any(f in data for f in forms(VALUES["slack-token"]))  # written with \\u00XX escapes
    assert b"https:\\/\\/deploy:" in data
    assert b'mistral\\"' in data  # a given value holding a quote


def test_redacted_bytes_hold_no_planted_secret() -> None:
    data = (REDACTED / "session.jsonl").read_bytes()
    for name, value in VALUES.items():
        for form in forms(value):
            assert form not in data, name
        # No 12-character piece of the random part either (a JWT's header and payload are public
        # base64 of fixed JSON, and can occur by chance in the image data: only its signature).
        random_part = value.rsplit(".", 1)[1] if name == "jwt" else value
        for chunk in (random_part[i : i + 12] for i in range(0, max(1, len(random_part) - 12), 6)):
            assert chunk.encode() not in data, name


def test_scan_finds_nothing_after_redaction() -> None:
    assert list(scan_lines(lines_of(REDACTED), detector(), file="s")) == []


def test_committed_redaction_is_what_redact_produces() -> None:
    redactor = Redactor(detector(), RedactOptions(key=KEY), file="s")
    out = b"".join(redactor.redact_lines(lines_of(PLANTED)))
    assert out == (REDACTED / "session.jsonl").read_bytes()


def test_untouched_lines_are_byte_identical() -> None:
    before = (PLANTED / "session.jsonl").read_bytes().splitlines(keepends=True)
    after = (REDACTED / "session.jsonl").read_bytes().splitlines(keepends=True)
    assert len(before) == len(after)
    same = [a == b for a, b in zip(before, after, strict=True)]
    assert same[-1]  # the last line holds no secret
    for a, b in zip(before, after, strict=True):
        if a != b:
            assert b"[REDACTED:" in b


@pytest.mark.parametrize("krt", [20000, 2000, 300])
@pytest.mark.parametrize("case", [REDACTED, STRIPPED], ids=["redacted", "stripped"])
def test_pi_loads_the_redacted_file_with_the_same_tree(krt: int, case: Path) -> None:
    before, after = recording(PLANTED, krt), recording(case, krt)
    assert after["invalid"] is False and before["invalid"] is False
    assert after["entryCount"] == before["entryCount"]
    ids = lambda rec: [(e.get("id"), e.get("parentId"), e.get("type")) for e in rec["entries"]]  # noqa: E731
    assert ids(after) == ids(before)
    assert after["leaves"] == before["leaves"] and len(after["leaves"]) >= 3
    assert after["roots"] == before["roots"]
    assert [n["id"] for n in after["tree"]] == [n["id"] for n in before["tree"]]
    for leaf in after["leaves"]:
        ctx_after, ctx_before = after["byLeaf"][leaf]["context"], before["byLeaf"][leaf]["context"]
        assert len(ctx_after["messages"]) == len(ctx_before["messages"]) > 0
        assert [m["role"] for m in ctx_after["messages"]] == [m["role"] for m in ctx_before["messages"]]


def test_pi_sees_redacted_text_and_no_secret() -> None:
    rec = recording(REDACTED)
    blob = json.dumps(rec, ensure_ascii=False)
    assert "[REDACTED:" in blob
    assert rec["sessionName"].startswith("deploy [REDACTED:perplexity-key:")
    assert "[REDACTED:github-token:" in next(iter(rec["labels"].values()))["label"]
    for name, value in VALUES.items():
        assert value not in blob, name


def test_committed_stripped_redaction_is_what_redact_produces() -> None:
    options = RedactOptions(
        key=KEY, paths=True, home="/home/planted", user="planted", strip_images=True, strip_thinking=True
    )
    redactor = Redactor(detector(), options, file="s")
    out = b"".join(redactor.redact_lines(lines_of(PLANTED)))
    assert out == (STRIPPED / "session.jsonl").read_bytes()
    assert redactor.stats.images_removed == 1 and redactor.stats.thinking_removed == 1


def test_pi_sees_no_image_thinking_or_home_after_stripping() -> None:
    rec = recording(STRIPPED)
    blob = json.dumps(rec, ensure_ascii=False)
    assert '"thinking"' not in blob and "thinkingSignature" not in blob
    assert '"image"' not in blob and "[image removed: image/png]" in blob
    assert "/home/planted" not in blob and rec["header"]["cwd"] == "~/project"
    for name, value in VALUES.items():
        assert value not in blob, name
