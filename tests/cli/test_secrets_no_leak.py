"""No planted secret ever reaches pitools' output: every scan/redact/export --redact run on the
planted corpus, in every format, with --debug, and through an internal error, is captured and
searched for every planted value (raw and JSON-escaped) and for 12-character pieces of it."""

from __future__ import annotations

import json
import shutil
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import PITOOLS

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "golden" / "secrets-planted"
DATA = json.loads((PLANTED / "planted.json").read_text())
VALUES: dict[str, str] = DATA["values"]


def _needles() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, value in VALUES.items():
        random_part = value.rsplit(".", 1)[1] if name == "jwt" else value
        pieces = {random_part[i : i + 12] for i in range(0, max(1, len(random_part) - 12), 4)}
        out[name] = {value, json.dumps(value)[1:-1]} | pieces
    return out


NEEDLES = _needles()


def assert_clean(*texts: str) -> None:
    blob = "\n".join(texts)
    leaked = sorted(name for name, forms in NEEDLES.items() if any(f in blob for f in forms))
    assert not leaked, f"planted secrets in the output: {leaked}"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    target = tmp_path / "planted.jsonl"
    shutil.copy(PLANTED / "session.jsonl", target)
    (tmp_path / "values.txt").write_text("".join(v + "\n" for v in DATA["given"]))
    return target


def invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(PITOOLS, args, env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def runs(corpus: Path) -> list[list[str]]:
    values = str(corpus.parent / "values.txt")
    given = DATA["given"]
    out: list[list[str]] = []
    for debug in ([], ["--debug"]):
        for fmt in ("human", "json", "github", "sarif"):
            out.append([*debug, "scan", str(corpus), "--format", fmt, "--values-file", values, "--env"])
        out.append([*debug, "scan", str(corpus.parent), "--value", given[0], "--value", given[1]])
        out.append([*debug, "scan", str(corpus), "--no-entropy", "--no-pi-keys"])
        for fmt in ("markdown", "html", "jsonl"):
            out.append([*debug, "export", str(corpus), "--redact", "--format", fmt, "--values-file", values])
            if fmt != "jsonl":
                out.append(
                    [
                        *debug,
                        "export",
                        str(corpus),
                        "--redact",
                        "--all",
                        "--format",
                        fmt,
                        "--env",
                        "--values-file",
                        values,
                    ]
                )
    return [r for r in out if r]


def test_scan_and_export_redact_print_no_secret(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --env reads these; Pi's own key variables are set to planted values too.
    env = {"MY_SERVICE_TOKEN": VALUES["given-value-2"], "GROQ_API_KEY": VALUES["groq-key"]}
    for args in runs(corpus):
        code, out, err = invoke(args, env)
        assert code in (0, 1), (args, code)
        assert_clean(out, err)
        if args[0 if args[0] != "--debug" else 1] == "scan":
            assert code == 1


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("fmt", ["human", "json"])
def test_redact_prints_no_secret_and_writes_none(corpus: Path, fmt: str, debug: bool) -> None:
    out_file = corpus.parent / f"out-{fmt}-{debug}.jsonl"
    args = ["--debug"] if debug else []
    args += [
        "redact",
        str(corpus),
        "-o",
        str(out_file),
        "--format",
        fmt,
        "--values-file",
        str(corpus.parent / "values.txt"),
    ]
    code, out, err = invoke(args)
    assert code == 0
    assert_clean(out, err, out_file.read_text())
    code, out, err = invoke(
        ["redact", str(corpus), "--in-place", "--value", DATA["given"][0], "--value", DATA["given"][1]]
    )
    assert code == 0
    assert_clean(out, err, corpus.read_text())


def test_an_internal_error_while_redacting_shows_no_secret(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.core.secrets import redact as R

    def broken(self: R.Redactor, kind: str, secret: str) -> str:
        raise RuntimeError(f"placeholder failed for {kind}")

    monkeypatch.setattr(R.Redactor, "placeholder", broken)
    out_file = corpus.parent / "never.jsonl"
    code, out, err = invoke(["redact", str(corpus), "-o", str(out_file)])
    assert code == 3
    assert "internal error" in err
    assert_clean(out, err)
    assert not out_file.exists()
    # --debug re-raises: the traceback (without locals, as Python prints it) holds no secret either.
    with pytest.raises(RuntimeError) as info:
        invoke(["--debug", "redact", str(corpus), "-o", str(out_file)])
    assert_clean("".join(traceback.format_exception(info.value)))
    assert not out_file.exists()


def test_findings_repr_hides_the_secret() -> None:
    from pitools.core.secrets.detect import Detector
    from pitools.core.secrets.scan import scan_lines

    lines = (PLANTED / "session.jsonl").read_bytes().splitlines(keepends=True)
    found = list(scan_lines(lines, Detector(), file="f"))
    assert found
    assert_clean(repr(found), str(found), "\n".join(f"{f}" for f in found), json.dumps([f.to_json() for f in found]))


def test_every_command_on_the_redacted_session_shows_no_secret(tmp_path: Path) -> None:
    """After `pitools redact`, nothing pitools prints about the session holds a planted value."""
    src = tmp_path / "planted.jsonl"
    shutil.copy(PLANTED / "session.jsonl", src)
    values = tmp_path / "values.txt"
    values.write_text("".join(v + "\n" for v in DATA["given"]))
    (tmp_path / "sessions").mkdir()
    red = tmp_path / "sessions" / "redacted.jsonl"
    assert invoke(["redact", str(src), "-o", str(red), "--values-file", str(values)])[0] == 0
    commands = [
        ["inspect", str(red)],
        ["inspect", str(red), "--format", "json"],
        ["validate", str(red), "--format", "json"],
        ["context", str(red), "--format", "json"],
        ["context", str(red), "--format", "markdown"],
        ["tree", str(red)],
        ["branches", str(red), "--format", "json"],
        ["compact", str(red), "--dry-run", "--format", "json"],
        ["export", str(red), "--all", "--format", "html"],
        ["export", str(red), "--format", "jsonl"],
        ["ls", "--all", "--session-dir", str(red.parent), "--format", "json", "--no-cache"],
        ["scan", str(red), "--values-file", str(values), "--format", "sarif"],
    ]
    outputs = []
    for args in commands:
        for debug in ([], ["--debug"]):
            code, out, err = invoke([*debug, *args])
            assert code in (0, 1), (args, code, err)
            assert_clean(out, err)
            outputs.append(out)
    # The commands that show session text did show it (with its placeholders).
    shown = [
        args[0] for args, out in zip([c for c in commands for _ in (0, 1)], outputs, strict=True) if "[REDACTED:" in out
    ]
    assert {"inspect", "context", "export", "ls"} <= set(shown)
