"""The viewer page with its request check built in a forked helper (``export --format html`` on
a big session): the same bytes as the page built in one process, the check really done by the
helper, and redone here when the helper cannot hand it back."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pitools.ops import request as ops_request
from pitools.ops import viewer as ops_viewer
from pitools.ops.parallel import can_fork
from tests import support

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

#: Sessions whose pages carry a check with findings (the heal cases), one without a model on
#: its branch, broken ones, and a compacted one.
CASES = [
    "heal-wedges",
    "heal-images",
    "heal-gemini",
    "broken-orphan",
    "gen-s0013_broken-orphan+dupids",
    "compacted-builtin-gen-s0001",
]


def _page(case: str, jobs: int) -> bytes:
    loaded, facts = ops_viewer.load_for_page(str(support.golden_session(case)), freeze=False)
    try:
        return b"".join(ops_viewer.viewer_chunks(loaded, None, facts=facts, jobs=jobs, use_config=False))
    finally:
        ops_viewer.close_loaded(loaded)


@pytest.fixture
def every_session_forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Fork for every session however small, and count the checks done in this process."""
    monkeypatch.setattr(ops_viewer, "PARALLEL_CHECK_ENTRIES", 0)
    here: list[int] = []
    real = ops_request.leaf_check

    def counted(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() == parent:
            here.append(1)
        return real(*args, **kwargs)

    parent = os.getpid()
    monkeypatch.setattr(ops_request, "leaf_check", counted)
    return here


@pytest.mark.parametrize("case", CASES)
def test_the_page_is_the_same_when_a_helper_checks(case: str, every_session_forks: list[int]) -> None:
    assert can_fork()
    alone = _page(case, 1)
    assert every_session_forks == [1]
    shared = _page(case, 2)
    assert shared == alone
    assert every_session_forks == [1], "the helper's check was not used: it was done here again"
    assert b'"check":{' in alone


def test_a_check_the_helper_cannot_send_is_done_here(
    every_session_forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A value marshal refuses (as pitools' UNDEFINED would be) fails the helper's send.
    real = ops_request.leaf_check

    def unsendable(*args: Any, **kwargs: Any) -> Any:
        out = dict(real(*args, **kwargs))
        out["odd"] = object() if os.getpid() != parent else "here"
        return out

    parent = os.getpid()
    monkeypatch.setattr(ops_request, "leaf_check", unsendable)
    page = _page("heal-wedges", 2)
    assert b'"odd":"here"' in page


def test_small_sessions_are_checked_here(monkeypatch: pytest.MonkeyPatch) -> None:
    forks: list[int] = []
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or -1)
    _page("heal-wedges", 2)
    assert forks == []


def test_a_page_not_written_to_the_end_stops_its_helper(
    every_session_forks: list[int], forked_helpers: list[Any]
) -> None:
    loaded, facts = ops_viewer.load_for_page(str(support.golden_session("heal-wedges")), freeze=False)
    try:
        pieces = ops_viewer.viewer_chunks(loaded, None, facts=facts, jobs=2, use_config=False)
        next(pieces)
        pieces.close()  # the output failed: the helper is killed and reaped, no zombie left
    finally:
        ops_viewer.close_loaded(loaded)
    assert len(forked_helpers) == 1
    support.assert_reaped(forked_helpers[0])


def test_a_page_that_cannot_be_built_stops_its_helper(
    every_session_forks: list[int], forked_helpers: list[Any]
) -> None:
    from pitools.errors import CycleError

    with pytest.raises(CycleError):  # the read model refuses a parentId loop, as in one process
        _page("broken-cycle", 2)
    assert len(forked_helpers) == 1
    support.assert_reaped(forked_helpers[0])


# -- the check read ahead: a helper that loads the file itself (export of a big file) -------------


def _file_page(case: str, jobs: int, pick: Any = None) -> bytes:
    loaded, pieces = ops_viewer.file_page(
        str(support.golden_session(case)),
        pick or (lambda loaded: None),
        jobs=jobs,
        use_config=False,
        freeze=False,
    )
    try:
        return b"".join(pieces)
    finally:
        ops_viewer.close_loaded(loaded)


@pytest.fixture
def every_file_reads_ahead(every_session_forks: list[int], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Read the check ahead for every file however small (the post-load fork is then unused)."""
    monkeypatch.setattr(ops_viewer, "PARALLEL_CHECK_BYTES", 0)
    return every_session_forks


@pytest.mark.parametrize("case", CASES)
def test_the_page_is_the_same_when_its_check_is_read_ahead(case: str, every_file_reads_ahead: list[int]) -> None:
    alone = _page(case, 1)
    assert every_file_reads_ahead == [1]
    ahead = _file_page(case, 2)
    assert ahead == alone
    assert every_file_reads_ahead == [1], "the helper's check was not used: it was done here again"


def test_a_check_ahead_of_another_read_is_done_here(every_file_reads_ahead: list[int]) -> None:
    """The helper read something else (here: chose another leaf, as after Pi appended an entry
    between the two reads): its check is not used, this process checks what it read."""
    parent = os.getpid()
    path = support.golden_session("heal-wedges")
    loaded, _facts = ops_viewer.load_for_page(str(path), freeze=False)
    first_id = loaded.index.ids[0]
    ops_viewer.close_loaded(loaded)

    def pick(loaded: Any) -> Any:
        return None if os.getpid() == parent else first_id

    assert _file_page("heal-wedges", 2, pick) == _page("heal-wedges", 1)
    assert every_file_reads_ahead == [1, 1]  # the -j 1 page's check, then this one's, here


def test_a_check_ahead_that_fails_is_done_here(
    every_file_reads_ahead: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    real = ops_request.leaf_check

    def dies_in_the_helper(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent:
            os._exit(3)
        return real(*args, **kwargs)

    monkeypatch.setattr(ops_request, "leaf_check", dies_in_the_helper)
    assert _file_page("heal-images", 2) == _page("heal-images", 1)


def test_no_check_ahead_without_room_for_a_second_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.ops import parallel

    monkeypatch.setattr(ops_viewer, "PARALLEL_CHECK_BYTES", 0)
    path = str(support.golden_session("heal-wedges"))
    size = os.stat(path).st_size
    monkeypatch.setattr(parallel, "memory_available", lambda: size * ops_viewer.AHEAD_MEMORY_FACTOR - 1)
    assert ops_viewer.page_check_ahead(path, lambda loaded: None, shown=None, jobs=2) is None
    assert ops_viewer.page_check_ahead(path, lambda loaded: None, shown=None, jobs=1) is None
    monkeypatch.setattr(parallel, "memory_available", lambda: size * ops_viewer.AHEAD_MEMORY_FACTOR)
    job = ops_viewer.page_check_ahead(path, lambda loaded: None, shown=None, jobs=2, use_config=False)
    assert job is not None
    job.cancel()


def test_a_file_that_cannot_be_read_stops_its_helper(
    every_file_reads_ahead: list[int], forked_helpers: list[Any], tmp_path: Any
) -> None:
    from pitools.errors import PitoolsError

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"not a session header"}\n')
    with pytest.raises(PitoolsError):
        ops_viewer.file_page(str(bad), lambda loaded: None, jobs=2, use_config=False, freeze=False)
    assert len(forked_helpers) == 1
    support.assert_reaped(forked_helpers[0])


def test_a_file_page_that_cannot_be_built_stops_its_helper(
    every_file_reads_ahead: list[int], forked_helpers: list[Any]
) -> None:
    from pitools.errors import CycleError

    with pytest.raises(CycleError):
        _file_page("broken-cycle", 2)
    assert len(forked_helpers) == 1
    support.assert_reaped(forked_helpers[0])
