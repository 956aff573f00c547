"""Fixtures for the fuzz tests: one scratch file per worker, and the end-of-run report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fuzz import support


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file path the property tests overwrite for every example (hypothesis dislikes tmp_path)."""
    return tmp_path_factory.mktemp("fuzz") / "session.jsonl"


@pytest.fixture(scope="session", autouse=True)
def _fuzz_report() -> Iterator[None]:
    yield
    support.write_report()
