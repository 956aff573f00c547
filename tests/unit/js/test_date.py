"""``Date#toISOString`` (core/js/date.py) against node's answers, and ``iso_now``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.date import iso_now, js_date_ms, to_iso_string

FIXTURE = json.loads((Path(__file__).resolve().parent / "fixtures" / "js_ops.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("rec", FIXTURE["dates"], ids=lambda r: str(r["ms"]))
def test_to_iso_string(rec: dict[str, Any]) -> None:
    assert to_iso_string(rec["ms"]) == rec["iso"]


@pytest.mark.parametrize("rec", [r for r in FIXTURE["dates"] if r["iso"]], ids=lambda r: str(r["ms"]))
def test_iso_string_parses_back(rec: dict[str, Any]) -> None:
    # new Date(d.toISOString()).getTime() === Math.trunc(ms)
    assert js_date_ms(rec["iso"]) == int(rec["ms"])


def test_iso_now_has_millisecond_precision() -> None:
    when = dt.datetime(2026, 5, 6, 7, 8, 9, 123999, tzinfo=dt.UTC)
    assert iso_now(when) == "2026-05-06T07:08:09.123Z"
    assert iso_now(when.astimezone(dt.timezone(dt.timedelta(hours=2)))) == "2026-05-06T07:08:09.123Z"


def test_invalid_times_have_no_iso_string() -> None:
    for bad in (float("nan"), float("inf"), 8.64e15 + 1, "0", None):
        assert to_iso_string(bad) is None
