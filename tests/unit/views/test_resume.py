"""The resume command and the id prefixes (pitools.core.views.resume): checked against
``shlex`` and a real POSIX shell, not against pitools' own output."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pitools.core.views.resume import resume_command, shell_quote, short_ids


@given(st.text())
def test_shell_quote_is_shlex_quote(text: str) -> None:
    assert shell_quote(text) == shlex.quote(text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1))
def test_a_path_reaches_pi_as_one_word(name: str) -> None:
    path = "/s/" + name
    assert shlex.split(resume_command(path)) == ["pi", "--session", path]


def test_hostile_path_runs_nothing(tmp_path: object) -> None:
    sh = shutil.which("sh")
    assert sh is not None
    path = '/s/a\'b $(echo owned) `echo owned` "c"; echo owned\n.jsonl'
    script = "pi() { printf '[%s]' \"$@\"; }\npitools() { printf '/new.jsonl'; }\n"
    for command, expected in (
        (resume_command(path), f"[--session][{path}]"),
        (resume_command(path, "e'1", at_leaf=False), "[--session][/new.jsonl]"),
    ):
        done = subprocess.run([sh, "-c", script + command], capture_output=True, text=True, check=True, timeout=30)
        assert done.stdout == expected and "owned" not in done.stdout.replace(path, "")


def test_bare_file_name_is_kept_a_path() -> None:
    """Pi reads --session ARG as a path only when it holds a / or ends in .jsonl."""
    assert resume_command("s.jsonl") == "pi --session ./s.jsonl"
    assert resume_command("dir/s.jsonl") == "pi --session dir/s.jsonl"
    assert resume_command("/a/s.jsonl", "e1", at_leaf=True) == "pi --session /a/s.jsonl"
    assert resume_command("/a/s.jsonl", "e1", at_leaf=False) == 'pi --session "$(pitools clone /a/s.jsonl --leaf e1)"'


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (["01a249d3-aaaa", "01a249d3-bbbb", "9f00aa11-cccc"], ["01a249d3-a", "01a249d3-b", "9f00aa11"]),
        (["abc", "abcdefghij", "abcdefghijk"], ["abc", "abcdefghij", "abcdefghijk"]),
        (["same-id-000", "same-id-000"], ["same-id-", "same-id-"]),  # one id in two files
    ],
)
def test_short_ids(ids: list[str], expected: list[str]) -> None:
    short = short_ids(ids)
    assert [short[i] for i in ids] == expected


@given(st.lists(st.text(alphabet="0123456789abcdef-", min_size=1, max_size=14), max_size=30))
def test_each_prefix_names_one_id(ids: list[str]) -> None:
    short = short_ids(ids)
    for sid, prefix in short.items():
        assert sid.startswith(prefix) and len(prefix) >= min(8, len(sid))
        others = [o for o in set(ids) if o != sid and o.startswith(prefix)]
        assert others == [] or prefix == sid  # an id another one starts with is shown whole
