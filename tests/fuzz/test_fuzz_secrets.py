"""The secret prefilters against the detectors (differential), and scan/redact on generated lines.

The property: a line the detectors flag (every string of it run through every detector, the
prefilters bypassed) is never dropped by the raw-line gate (:meth:`Detector.line_may_hit`, and
:meth:`Detector.candidate_lines` over a chunk of several lines) nor by the string prefilter (the
real scan reports the same findings as the oracle). And ``redact`` leaves no finding behind.

Lines come from :mod:`tests.fuzz.secret_shapes`: the shapes of issue 27 (long assignment names,
credential JSON keys, base64 after escapes or wrapped at any width, tokens on consecutive lines,
non-ASCII exact values written with escapes, overlapping values) in hostile context and every
JSON spelling. Budget: ``PITOOLS_FUZZ_EXAMPLES`` (1/8 to each property, like the core tests).
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from pitools.core.secrets.redact import RedactOptions, Redactor
from pitools.core.secrets.scan import _line_findings, scan_chunks
from tests.fuzz import support
from tests.fuzz.secret_shapes import VALUES_NON_ASCII, detectors, oracle_findings, secret_line

#: Exact values: non-ASCII ones, and two that overlap (Xk4mPq9Zr7Lw / r7Lw2Nc8Vb5T).
VALUES = [*VALUES_NON_ASCII, "Xk4mPq9Zr7Lw", "r7Lw2Nc8Vb5T"]
DETECTOR, ORACLE = detectors(VALUES)
#: Lines per example: the chunk gate sees its lines together.
LINES = 8


def _lines(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(LINES):
        if rng.random() < 0.1:
            out.append(b'{"type":"message","id":"x","text":"Xk4mPq9Zr7Lw2Nc8Vb5T overlapping values"}')
        else:
            out.append(secret_line(rng, VALUES))
    return out


@support.hypothesis_settings()
@given(st.integers(0, 2**63))
def test_prefilter_never_drops_a_flagged_line(seed: int) -> None:
    support.STATS.runs["secrets-prefilter"] += 1
    lines = _lines(seed)
    chunk = b"\n".join(lines) + b"\n"
    kept = {start for start, _ in DETECTOR.candidate_lines(chunk)}
    offset = 0
    flagged_lines = []
    for lineno, line in enumerate(lines, 1):
        expected = oracle_findings(ORACLE, line)
        if expected:
            flagged_lines.append(lineno)
            assert DETECTOR.line_may_hit(line), f"line_may_hit dropped {line!r}: {expected}"
            assert offset in kept, f"candidate_lines dropped {line!r}: {expected}"
            real = sorted((f.field, f.kind) for f in _line_findings(line, 1, DETECTOR, "f"))
            assert real == expected, f"the string prefilter dropped {line!r}: {expected} vs {real}"
        offset += len(line) + 1
    # The chunked scan (what `pitools scan` runs) reports on exactly those lines.
    found = {f.line for f in scan_chunks([chunk], DETECTOR, file="f")}
    assert found == set(flagged_lines)


@support.hypothesis_settings()
@given(st.integers(0, 2**63))
def test_redact_leaves_no_finding(seed: int) -> None:
    support.STATS.runs["secrets-redact"] += 1
    redactor = Redactor(DETECTOR, RedactOptions(key=b"k"), file="f")
    for lineno, line in enumerate(_lines(seed), 1):
        with support.watchdog(support.CORE_TIMEOUT):
            new = redactor.redact_line(line + b"\n", lineno)  # refuses (raises) if anything is left
        assert not oracle_findings(ORACLE, new.rstrip(b"\n")), f"left after redact: {new!r}"
        for value in VALUES:
            assert value.encode() not in new
