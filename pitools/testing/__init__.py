"""Pi sessions as test fixtures: the Python side of ``pitools validate`` / ``context`` / ``compact``.

Extension authors and harness builders keep Pi sessions in their repositories and want their test
suite to say when one stops being valid or when Pi would build a different context from it. This
module gives them that without a shell step::

    from pitools.testing import PiSession

    def test_fixture_is_valid():
        PiSession("tests/fixtures/run.jsonl").assert_valid()

Installing pitools also registers a pytest plugin (:mod:`pitools.testing.plugin`, entry point
``pytest11``) with a ``pi_session`` fixture and the ``--pi-sessions-validate GLOB`` option, and
:class:`PiContextSnapshot` / :class:`PiMarkdownSnapshot` store contexts as reviewable syrupy
snapshots (syrupy is needed only for those two; ``pip install 'pi-session-tools[testing]'``).

Every document is produced by the command line itself, run in-process: ``.context()`` is exactly
what ``pitools context FILE --format json`` prints, parsed, so a snapshot taken here and a
``pitools`` run in a terminal never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike, fspath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pitools.testing.snapshot import PiContextSnapshot, PiMarkdownSnapshot

__all__ = [
    "Finding",
    "PiContextSnapshot",
    "PiMarkdownSnapshot",
    "PiSession",
    "PiSessionError",
    "ValidationResult",
    "run_pitools",
]


class PiSessionError(Exception):
    """pitools refused the session or the request (the one-line message the CLI prints, and its
    exit code: 1 bad input, 2 usage, 3 internal error)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Finding:
    """One ``pitools validate`` finding (the JSON form's fields; codes are listed in the README)."""

    code: str
    severity: str
    message: str
    line: int | None
    entry_id: str | None
    path: str

    def describe(self) -> str:
        """``code path:line message``: how :meth:`PiSession.assert_valid` lists a finding."""
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{self.code} {where} {self.message}"


@dataclass(frozen=True)
class ValidationResult:
    """What ``pitools validate FILE --format json`` reports for one file."""

    path: str
    findings: list[Finding]
    document: dict[str, Any] = field(repr=False)

    def at(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    @property
    def errors(self) -> list[Finding]:
        return self.at("error")

    @property
    def warnings(self) -> list[Finding]:
        return self.at("warning")

    @property
    def ok(self) -> bool:
        """True when there is no finding at error severity (``pitools validate`` exits 0)."""
        return not self.errors

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.findings]


def run_pitools(args: list[str]) -> tuple[int, bytes, str]:
    """Run ``pitools ARGS`` in this process: ``(exit code, stdout bytes, stderr text)``.

    The real command line runs through its one entry point (:func:`pitools.cli.main`: the same
    option parsing, loader, renderers, error handler and exit codes) on streams of its own; an
    internal error (exit 3) carries its one-line message like any other.
    """
    import io

    from pitools.cli import Environment, main

    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    stderr = io.StringIO()
    status = main(args, Environment(stdout=stdout, stderr=stderr, stdin=io.StringIO()))
    stdout.flush()
    return status, raw.getvalue(), stderr.getvalue()


class PiSession:
    """One Pi session file, checked and replayed the way the ``pitools`` commands do it.

    Nothing here writes to the file. Each method runs the matching command and returns its JSON
    document as Python data; a command that refuses (unreadable file, unknown leaf, …) raises
    :class:`PiSessionError` with the CLI's one-line message.
    """

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = fspath(path)

    def __repr__(self) -> str:
        return f"PiSession({self.path!r})"

    def _json(self, command: str, *options: str) -> Any:
        import orjson

        code, out, err = run_pitools([command, self.path, "--format", "json", *options])
        if code != 0:
            raise PiSessionError(err.strip() or f"pitools {command} exited {code}", code)
        return orjson.loads(out)

    @staticmethod
    def _leaf(leaf: str | None) -> list[str]:
        return [] if leaf is None else ["--leaf", leaf]

    def validate(self, *, strict: bool = False, ignore: tuple[str, ...] = ()) -> ValidationResult:
        """Every problem pitools finds in the file (``pitools validate FILE --format json``).

        Findings do not raise: a failing file gives a result whose :attr:`~ValidationResult.ok` is
        false. ``ignore`` drops finding codes, as ``--ignore`` does.
        """
        import orjson

        args = ["validate", self.path, "--format", "json"]
        for finding_code in ignore:
            args += ["--ignore", finding_code]
        if strict:
            args.append("--strict")
        code, out, err = run_pitools(args)
        if code not in (0, 1) or not out:
            raise PiSessionError(err.strip() or f"pitools validate exited {code}", code)
        document = orjson.loads(out)
        report = document["files"][0]
        findings = [
            Finding(
                code=f["code"],
                severity=f["severity"],
                message=f["message"],
                line=f.get("line"),
                entry_id=f.get("entryId"),
                path=report["path"],
            )
            for f in report["findings"]
        ]
        return ValidationResult(path=report["path"], findings=findings, document=document)

    def assert_valid(self, *, strict: bool = False, ignore: tuple[str, ...] = ()) -> ValidationResult:
        """Fail (``AssertionError``) when the file has a finding at error severity — or, with
        ``strict``, at warning severity too. The message lists each as ``code path:line message``."""
        result = self.validate(strict=strict, ignore=ignore)
        failing = [f for f in result.findings if f.severity == "error" or (strict and f.severity == "warning")]
        if failing:
            lines = "\n".join(f"  {f.describe()}" for f in failing)
            raise AssertionError(f"{self.path}: {len(failing)} finding(s) pitools validate fails on:\n{lines}")
        return result

    def context(self, leaf: str | None = None) -> dict[str, Any]:
        """Pi's context at a leaf: exactly ``pitools context FILE [--leaf REF] --format json``.

        ``leaf`` takes what ``--leaf`` takes (an id, a unique prefix, a label, ``L17``); the
        default is Pi's default leaf, the last entry of the file.
        """
        result: dict[str, Any] = self._json("context", *self._leaf(leaf))
        return result

    def context_markdown(self, leaf: str | None = None) -> str:
        """The same context as ``pitools context FILE --format markdown`` prints it."""
        code, out, err = run_pitools(["context", self.path, "--format", "markdown", *self._leaf(leaf)])
        if code != 0:
            raise PiSessionError(err.strip() or f"pitools context exited {code}", code)
        return out.decode("utf-8")

    def plan(
        self,
        leaf: str | None = None,
        *,
        keep_recent_tokens: int | None = None,
        reserve_tokens: int | None = None,
        context_window: int | None = None,
        use_config: bool = False,
    ) -> dict[str, Any]:
        """Pi's compaction plan at a leaf: ``pitools compact FILE --dry-run --format json``.

        Pi's settings files (``~/.pi/agent/settings.json``, the project's ``.pi/``) are not read
        unless ``use_config`` is true, so a snapshot is the same on every machine; the settings
        can be given here instead (Pi's defaults otherwise).
        """
        options = ["--dry-run", *self._leaf(leaf)]
        for flag, value in (
            ("--keep-recent-tokens", keep_recent_tokens),
            ("--reserve-tokens", reserve_tokens),
            ("--context-window", context_window),
        ):
            if value is not None:
                options += [flag, str(value)]
        if not use_config:
            options.append("--no-config")
        result: dict[str, Any] = self._json("compact", *options)
        return result

    def tree(self, leaf: str | None = None, *, filter: str | None = None) -> dict[str, Any]:
        """The session tree as ``pitools tree FILE --format json`` gives it (``filter`` as ``--filter``)."""
        options = self._leaf(leaf)
        if filter is not None:
            options += ["--filter", filter]
        result: dict[str, Any] = self._json("tree", *options)
        return result

    def inspect(self) -> dict[str, Any]:
        """Header, counts, leaves, labels and Pi's usage totals (``pitools inspect --format json``)."""
        result: dict[str, Any] = self._json("inspect")
        return result


def __getattr__(name: str) -> Any:
    # The snapshot extensions need syrupy: import it only when one is asked for.
    if name in ("PiContextSnapshot", "PiMarkdownSnapshot"):
        from pitools.testing import snapshot

        return getattr(snapshot, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
