"""A pager for long human output, by git's rules (``pager.c``: ``git_pager``, ``setup_pager``).

* Only when stdout is a terminal (never in a pipe, a file or a test's stream), and not with
  ``--no-pager`` or ``TERM=dumb``.
* The command: ``PITOOLS_PAGER``, else ``PAGER``, else ``less``; an empty value or ``cat`` means
  no pager. It is run by the shell (``sh -c``), as git runs it, so ``less -S`` works.
* The pager's environment: ``LESS=FRX`` unless ``LESS`` is set (quit when the output fits one
  screen, keep colours, leave the screen as it was) and ``LV=-c`` unless ``LV`` is set.
* pitools writes into the pager and waits for it to end before exiting; a reader that quits
  early is a closed pipe (exit 0, like ``| head``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from contextlib import AbstractContextManager
    from typing import Any

DEFAULT_PAGER = "less"


def pager_command(env: Mapping[str, str], stdout_isatty: bool, term_dumb: bool = False) -> str | None:
    """The pager to run for this output, or None (git's ``git_pager``)."""
    if not stdout_isatty or term_dumb:
        return None
    command = env.get("PITOOLS_PAGER")
    if command is None:
        command = env.get("PAGER")
    if command is None:
        command = DEFAULT_PAGER
    command = command.strip()
    return None if command in ("", "cat") else command


def pager_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with git's defaults for ``less`` and ``lv`` where the user set none."""
    out = dict(env)
    out.setdefault("LESS", "FRX")
    out.setdefault("LV", "-c")
    return out


def paging(out: Any, command: str | None, env: Mapping[str, str]) -> AbstractContextManager[None]:
    """While the block runs, ``out.stdout`` (an :class:`~pitools.cli.output.Output`) writes into
    ``command``'s stdin; then the pager is waited for. With no command, nothing changes.

    ``subprocess`` and ``contextlib`` are imported here: the commands that never page (and the
    fast ``ls``/``search``/``usage`` path) do not pay for them."""
    import contextlib

    @contextlib.contextmanager
    def run() -> Iterator[None]:
        if command is None:
            yield
            return
        import io
        import subprocess

        out.stdout.flush()
        try:
            proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=pager_environment(env))
        except OSError:
            yield  # no shell to run it: print as if there were no pager
            return
        assert proc.stdin is not None
        encoding = getattr(out.stdout, "encoding", None) or "utf-8"
        stream = io.TextIOWrapper(proc.stdin, encoding=encoding, errors="backslashreplace", write_through=True)
        saved = out.stdout
        out.use_stdout(stream)
        try:
            yield
        finally:
            out.use_stdout(saved)
            with contextlib.suppress(OSError):  # the reader quit early (a closed pipe)
                stream.close()
            while True:
                try:
                    proc.wait()
                    break
                except KeyboardInterrupt:  # Ctrl-C belongs to the pager (less stays open, as with git)
                    continue

    return run()
