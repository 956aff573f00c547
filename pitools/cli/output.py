"""The one output layer: streams, terminal detection, colour, width, safe text, JSON, exit codes.

Modelled on httpie's ``Environment``: one :class:`Output` object holds stdin/stdout/stderr,
whether each is a terminal, the colour decision and the width. The CLI builds it once per run
(:func:`pass_output`, from ``--color``/``--width`` and the environment) and hands it to the
command, which passes it, or the rich consoles it makes, down to its helpers and renderers:
nothing below a command looks it up. Tests build their own (``Output(...)`` with
``io.StringIO`` streams) or run the real CLI in a pseudo-terminal.

Rules it enforces for every command:

- Colour: ``--color always|never`` wins; with ``auto`` (the default) a non-empty ``NO_COLOR``
  turns colour off, then a non-empty ``FORCE_COLOR`` (other than ``0``) turns it on, then
  ``TERM=dumb`` turns it off; otherwise colour follows whether the stream is a terminal.
  stdout and stderr decide separately.
- Width: ``--width N`` (or ``PITOOLS_WIDTH``) fixes it; otherwise a terminal's width when the
  stream is one, and no limit at all when it is not (nothing is wrapped or cut in a pipe).
  Lines never end in padding spaces.
- Safe text: everything printed through a console or :meth:`Output.echo` goes through
  :func:`~pitools.render.safe.safe_text`, so ESC/CSI/OSC sequences, BEL, other C0/C1 controls,
  bidi overrides and lone surrogates from a session show up escaped, never raw; and the
  streams are set to ``backslashreplace`` so a character the locale cannot encode never
  raises (``LANG=C``, ``PYTHONIOENCODING=ascii``, a latin-1 terminal).
- JSON: :meth:`Output.write_json` is the one writer (orjson via ``to_json_bytes``); JSON is an
  interface and is written exactly (JSON itself escapes every C0 control).
- Broken pipe: a reader that closes early (``| head -1``) ends the run with exit 0, for every
  command and format (see :func:`silence_stdout`).
- Exit status: the int a command returns is the process's exit status (``pitools.cli``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

from pitools.cli.colour import wants_color
from pitools.cli.environment import Environment, make_safe_stream
from pitools.cli.errors import EXIT_FAILURE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from pitools.cli.pager import pager_command
from pitools.render.safe import UNLIMITED_WIDTH, safe_text

__all__ = [
    "COLOR_MODES",
    "EXIT_FAILURE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Output",
    "make_safe_stream",
    "pass_output",
    "start_progress",
    "stop_progress",
]

COLOR_MODES = ("auto", "always", "never")

#: Where the CLI keeps ``--color``/``--width`` (root context's ``meta``) and the built Output.
META_COLOR = "pitools.output.color"
META_WIDTH = "pitools.output.width"
META_OUTPUT = "pitools.output"

#: Trailing padding before the end of a line (and before any closing SGR codes).
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
_TRAILING_QUICK = re.compile(r" (?:\x1b\[[0-9;]*m)*(?:\n|$)")


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):
        return False


def color_system(env: Mapping[str, str]) -> str:
    """The rich colour system for a coloured stream: truecolor, 256 or standard."""
    if env.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return "truecolor"
    if "256" in env.get("TERM", ""):
        return "256"
    return "standard"


def terminal_width(stream: Any, env: Mapping[str, str]) -> int:
    """A terminal's width: ``COLUMNS`` when set, else the tty's size, else 80."""
    columns = env.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def parse_width(value: str | int | None) -> int | None:
    """``--width``/``PITOOLS_WIDTH``: a positive int, else None (not given or not a number)."""
    if value is None or value == "":
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


class StripTrailing:
    """A file-like wrapper that drops the padding spaces at the end of each written line."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        # Substring tests first: the regex tries every space, and a deep tree's gutters are
        # mostly spaces (4 s of 16 on a 1 GB session). Without ESC only " \n" or a final space
        # can be trailing padding.
        if ("\x1b" in text or " \n" in text or text.endswith(" ")) and _TRAILING_QUICK.search(text):
            text = _TRAILING.sub(r"\1", text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return _isatty(self.stream)

    def fileno(self) -> int:
        return int(self.stream.fileno())

    @property
    def encoding(self) -> str:
        return str(getattr(self.stream, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:
        return getattr(self.stream, "errors", None)


@dataclass
class PlainConsole:
    """The part of a rich console the line writer uses, for output without colour."""

    file: Any
    width: int
    color_system: None = None
    no_color: bool = True


#: The width given to rich when there is no limit (a pipe without --width): wide enough that
#: no line is ever cut, while tables still size columns to their content.
UNLIMITED = UNLIMITED_WIDTH


@dataclass
class Output:
    """Streams, terminal flags, colour and width for one run (httpie's ``Environment``)."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout_isatty: bool = False
    stderr_isatty: bool = False
    stdin_isatty: bool = False
    color: bool = False
    err_color: bool = False
    #: None: no limit (never wrap or cut).
    width: int | None = None
    err_width: int | None = None
    colors: str = "standard"
    term_dumb: bool = False
    #: Seconds a command works before its spinner shows (``PITOOLS_PROGRESS_DELAY``; tests use 0).
    progress_delay: float = 1.0
    #: The pager long output may go through (:mod:`pitools.cli.pager`): None unless stdout is a
    #: terminal; ``environ`` is the run's variables, which the pager gets.
    pager: str | None = None
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)
    _consoles: dict[bool, Any] = field(default_factory=dict, repr=False)
    _spinner: Any = field(default=None, repr=False)

    @classmethod
    def from_environment(
        cls,
        color: str = "auto",
        width: int | None = None,
        *,
        stdout: Any = None,
        stderr: Any = None,
        stdin: Any = None,
        env: Mapping[str, str] | None = None,
    ) -> Output:
        """Decide everything once from the streams, ``--color``, ``--width`` and the environment."""
        env = os.environ if env is None else env
        stdout = sys.stdout if stdout is None else stdout
        stderr = sys.stderr if stderr is None else stderr
        stdin = sys.stdin if stdin is None else stdin
        for stream in (stdout, stderr):
            make_safe_stream(stream)
        out_tty, err_tty = _isatty(stdout), _isatty(stderr)
        if width is None:
            width = parse_width(env.get("PITOOLS_WIDTH"))
        return cls(
            stdout=stdout,
            stderr=stderr,
            stdin=stdin,
            stdout_isatty=out_tty,
            stderr_isatty=err_tty,
            stdin_isatty=_isatty(stdin),
            color=wants_color(color, out_tty, env),
            err_color=wants_color(color, err_tty, env),
            width=width if width is not None else (terminal_width(stdout, env) if out_tty else None),
            err_width=width if width is not None else (terminal_width(stderr, env) if err_tty else None),
            colors=color_system(env),
            term_dumb=env.get("TERM") == "dumb",
            progress_delay=_progress_delay(env),
            pager=pager_command(env, out_tty, env.get("TERM") == "dumb"),
            environ=env,
        )

    # -- rich ----------------------------------------------------------------------------------

    def console(self, err: bool = False) -> Any:
        """The rich console for stdout (or stderr): safe text, our colour and width decisions."""
        self.stop_progress()
        cached = self._consoles.get(err)
        if cached is None:
            cached = self._consoles[err] = _make_console(self, err)
        return cached

    def line_console(self, err: bool = False) -> Any:
        """What the fast line writer (``render.tree.LineWriter``) needs: the rich console when
        there is colour, else a light stand-in, so plain output never imports rich."""
        self.stop_progress()
        if self.err_color if err else self.color:
            return self.console(err)
        width = self.err_width if err else self.width
        return PlainConsole(StripTrailing(self.stderr if err else self.stdout), UNLIMITED if width is None else width)

    @property
    def progress(self) -> bool:
        """Whether live progress may be drawn on stderr: a real terminal only, never a pipe."""
        return self.stderr_isatty and not self.term_dumb

    def start_progress(self, label: str) -> None:
        """Show ``label`` (made safe, one line) with a spinner on this run's stderr once the
        command has worked :attr:`progress_delay` seconds; only where :attr:`progress` allows.
        Erased by any output through this object and by :meth:`stop_progress`."""
        self.stop_progress()
        if not self.progress:
            return
        from pitools.cli.progress import Spinner

        self._spinner = Spinner(self.stderr, safe_text(label, one_line=True), self.progress_delay)
        self._spinner.start()

    def stop_progress(self) -> None:
        """Erase this run's spinner, if one is drawing (before output, and when the run ends)."""
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    # -- paging --------------------------------------------------------------------------------

    def paged(self, enabled: bool = True) -> AbstractContextManager[None]:
        """Within the block stdout goes through the pager (git's rules, :mod:`pitools.cli.pager`):
        only on a terminal, unless ``enabled`` is false (``--no-pager``)."""
        from pitools.cli.pager import paging

        return paging(self, self.pager if enabled else None, self.environ)

    def use_stdout(self, stream: Any) -> None:
        """Write stdout to ``stream`` from now on (the pager's pipe, then back)."""
        self.stop_progress()
        self.stdout.flush()
        self.stdout = stream
        self._consoles.pop(False, None)

    # -- plain text ----------------------------------------------------------------------------

    def echo(self, text: str = "", *, err: bool = False, nl: bool = True, one_line: bool = False) -> None:
        """Write ``text`` (session data allowed: it is made safe) and a newline."""
        self.stop_progress()
        stream = self.stderr if err else self.stdout
        stream.write(safe_text(text, one_line=one_line) + ("\n" if nl else ""))
        stream.flush()

    def message(self, text: str) -> None:
        """One ``pitools: ...`` line on stderr; the text stays on one line."""
        self.echo(f"pitools: {text}", err=True, one_line=True)

    def write_text(self, text: str) -> None:
        """A document (Markdown, HTML) on stdout, made safe, written as UTF-8 where possible.

        Encoded a megabyte at a time, so a big export is never held twice more in memory.
        """
        step = 1 << 20
        self.write_text_pieces(text[i : i + step] for i in range(0, len(text), step))

    def write_text_pieces(self, pieces: Iterable[str]) -> None:
        """A document made piece by piece (a streamed export) on stdout, as :meth:`write_text`
        writes it whole: the same bytes, with only about a megabyte held at a time."""
        self.write_chunks(encoded_text(pieces, self._encoding()))

    def write_utf8_pieces(self, chunks: Iterable[bytes]) -> None:
        """A document already encoded as UTF-8 (the viewer page) on stdout, as
        :meth:`write_text_pieces` writes the same text (:func:`safe_utf8_chunks`)."""
        self.write_chunks(safe_utf8_chunks(chunks, self._encoding()))

    def write_bytes(self, data: bytes) -> None:
        """Bytes on stdout, unchanged (session lines, JSON)."""
        self.stop_progress()
        self.stdout.flush()
        buffer = getattr(self.stdout, "buffer", None)
        if buffer is None:  # a text-only stream (tests): decode back
            self.stdout.write(data.decode("utf-8", "backslashreplace"))
            self.stdout.flush()
            return
        buffer.write(data)
        buffer.flush()

    def write_chunks(self, chunks: Iterable[bytes]) -> None:
        """Many byte chunks on stdout, unchanged, without joining them first."""
        self.stop_progress()
        self.stdout.flush()
        buffer = getattr(self.stdout, "buffer", None)
        for chunk in chunks:
            if buffer is None:
                self.stdout.write(chunk.decode("utf-8", "backslashreplace"))
            else:
                buffer.write(chunk)
        (self.stdout if buffer is None else buffer).flush()

    def write_chunks_to(self, output: str | None, chunks: Iterable[bytes], *, overwrite: bool = False) -> None:
        """``chunks`` on stdout, or with ``-o OUT`` into the new file OUT and ``wrote OUT`` on
        stderr. The file is written through the store as the chunks are made, under a temporary
        name it gets only once complete (never replacing a file unless ``overwrite``, --force),
        so a failure midway leaves nothing behind."""
        if output is None:
            self.write_chunks(chunks)
            return
        from pitools import store

        store.write_new(output, chunks, overwrite=overwrite)
        self.message(f"wrote {output}")

    def write_json(self, data: Any) -> None:
        """One JSON document on stdout (orjson, JavaScript number forms, trailing newline)."""
        from pitools.core.js.json.encode import to_json_bytes
        from pitools.core.js.json.stream import write_json_to

        self.stop_progress()
        buffer = getattr(self.stdout, "buffer", None)
        if buffer is not None:
            self.stdout.flush()
            write_json_to(buffer, data)
            buffer.flush()
            return
        self.write_bytes(to_json_bytes(data) + b"\n")

    def _encoding(self) -> str:
        encoding = getattr(self.stdout, "encoding", None) or "utf-8"
        return "utf-8" if encoding.lower().replace("-", "").replace("_", "") == "utf8" else encoding


#: How much text :func:`encoded_text` gathers before making it safe and encoding it. A chunk,
#: its UTF-8 and what the safety check keeps of it then stay in the CPU's cache: 64 Ki
#: characters made a 100 MB Markdown export 5-8 % cheaper than 256 Ki (issue 39).
TEXT_CHUNK = 1 << 16


#: Bytes :func:`_safe_utf8` drops before its check: everything but the ASCII controls safe_text
#: escapes, the UTF-8 lead bytes (kept so that the bytes of different characters never become
#: neighbours) and the continuation bytes that occur in the UTF-8 forms of the unsafe characters.
_SAFE_UTF8_BYTES = bytes(
    b
    for b in range(256)
    if not ((b < 0x20 and b not in (0x09, 0x0A)) or 0x7F <= b <= 0x9F or 0xA6 <= b <= 0xAE or b >= 0xC0)
)
#: The UTF-8 forms of what safe_text escapes (lone surrogates have none: strict encoding fails).
_UNSAFE_UTF8 = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
)


def _safe_utf8(text: str) -> bytes:
    """``safe_text(text).encode("utf-8", "backslashreplace")``, checked on the encoded bytes.

    Nearly every chunk of a transcript is already safe: encoding it strictly (which fails on lone
    surrogates) and looking for the unsafe characters' UTF-8 forms among the few bytes left once
    the ASCII text is dropped costs about a third of the regular expression over every character.
    Only a chunk with something to escape goes through safe_text.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return safe_text(text).encode("utf-8", "backslashreplace")
    if _UNSAFE_UTF8.search(data.translate(None, _SAFE_UTF8_BYTES)) is None:
        return data
    return safe_text(text).encode("utf-8", "backslashreplace")


def safe_utf8_chunks(chunks: Iterable[bytes], encoding: str = "utf-8") -> Iterator[bytes]:
    """UTF-8 pieces of a document as :func:`encoded_text` writes their text: a piece with
    nothing to escape (nearly all) goes out as it is, without being decoded and encoded again."""
    if encoding != "utf-8":
        yield from encoded_text((chunk.decode("utf-8") for chunk in chunks), encoding)
        return
    for chunk in chunks:
        if _UNSAFE_UTF8.search(chunk.translate(None, _SAFE_UTF8_BYTES)) is None:
            yield chunk
        else:
            yield _safe_utf8(chunk.decode("utf-8"))


def encoded_text(pieces: Iterable[str], encoding: str = "utf-8") -> Iterator[bytes]:
    """Text pieces as safe, encoded chunks of about :data:`TEXT_CHUNK` characters.

    :func:`~pitools.render.safe.safe_text` and the encoder both work one character at a time,
    so the chunks join to exactly the bytes of the whole text made safe and encoded at once
    (characters the encoding lacks become ``\\uXXXX``; after safe_text no lone surrogate is left).
    """
    if encoding == "utf-8":
        encode = _safe_utf8
    else:

        def encode(text: str) -> bytes:
            return safe_text(text).encode(encoding, "backslashreplace")

    buffer: list[str] = []
    size = 0
    step = TEXT_CHUNK
    for piece in pieces:
        if len(piece) > step:  # a huge text (one tool output) is encoded a slice at a time
            if buffer:
                yield encode("".join(buffer))
                buffer.clear()
                size = 0
            for i in range(0, len(piece), step):
                yield encode(piece[i : i + step])
            continue
        buffer.append(piece)
        size += len(piece)
        if size >= step:
            yield encode("".join(buffer))
            buffer.clear()
            size = 0
    if buffer:
        yield encode("".join(buffer))


def _make_console(out: Output, err: bool) -> Any:
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """A rich console that escapes unsafe characters in every text segment it writes."""

        def _render_buffer(self, buffer: Any) -> str:
            return super()._render_buffer(
                seg if seg.control else Segment(safe_text(seg.text), seg.style, seg.control) for seg in buffer
            )

        def on_broken_pipe(self) -> None:
            # rich exits 1 here; pitools' rule is 0 (handled where the command runs).
            self.quiet = True
            raise BrokenPipeError

    color = out.err_color if err else out.color
    isatty = out.stderr_isatty if err else out.stdout_isatty
    width = out.err_width if err else out.width
    stream = out.stderr if err else out.stdout
    return SafeConsole(
        file=StripTrailing(stream),  # type: ignore[arg-type]  # file-like: write/flush/isatty
        force_terminal=color or isatty,
        force_interactive=isatty and not out.term_dumb,
        color_system=out.colors if color else None,  # type: ignore[arg-type]  # one of rich's names
        no_color=not color,
        width=UNLIMITED if width is None else width,
        height=25,
        highlight=False,
        # Messages stay one line each (soft wrap): scripts read stderr line by line.
        soft_wrap=err,
        emoji=False,
        markup=False,
        _environ={},
    )


def _progress_delay(env: Mapping[str, str]) -> float:
    try:
        return float(env.get("PITOOLS_PROGRESS_DELAY", "1"))
    except ValueError:
        return 1.0


def output_for(env: Environment, color: str | None = None, width: int | None = None) -> Output:
    """The :class:`Output` of a run on ``env`` (its streams and variables), with ``--color``/``--width``."""
    return Output.from_environment(
        color or "auto", width, stdout=env.stdout, stderr=env.stderr, stdin=env.stdin, env=env.environ
    )


def run_output() -> Output:
    """The run's :class:`Output`, built once from the run's :class:`Environment` (the click
    context's ``obj``, which :func:`pitools.cli.main` sets) and ``--color``/``--width``.

    The one place it is built: commands receive it through :func:`pass_output`.
    """
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return Output.from_environment()
    root = ctx.find_root()
    existing = root.meta.get(META_OUTPUT)
    if existing is None:
        env = root.obj if isinstance(root.obj, Environment) else Environment()
        existing = root.meta[META_OUTPUT] = output_for(env, root.meta.get(META_COLOR), root.meta.get(META_WIDTH))
        root.call_on_close(existing.stop_progress)  # the run ends (or its options fail): erase
    assert isinstance(existing, Output)
    return existing


def pass_output(f: Callable[..., Any]) -> Callable[..., Any]:
    """Give a click command the run's :class:`Output` as its first argument (click's ``pass_obj``)."""
    import functools

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return f(run_output(), *args, **kwargs)

    return wrapper


def start_progress(label: str) -> None:
    """Show ``label`` with a spinner on the run's stderr if the run takes over a second
    (:meth:`Output.start_progress`). For the option callbacks that read a session before the
    command runs; the run's Output erases it before any output and when the run ends."""
    run_output().start_progress(label)


def stop_progress() -> None:
    """Erase every spinner still drawing (the error handler's last word on a run)."""
    progress = sys.modules.get("pitools.cli.progress")
    if progress is not None:  # no spinner can exist before its module is loaded
        progress.stop_spinners()
