"""``pitools redact`` and ``export --redact``: plan in core, write through ``pitools.store``.

The file is streamed twice at most: once to stamp it (for ``--in-place``, so a change made by
another process meanwhile refuses the write) and once to rewrite it. Nothing but redacted bytes
is ever written; the original is kept as a backup for ``--in-place`` unless told otherwise.
"""

from __future__ import annotations

import contextlib
import os
import secrets as _random
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pitools import store
from pitools.core.secrets.detect import Detector
from pitools.core.secrets.redact import RedactOptions, Redactor, RedactStats
from pitools.errors import PitoolsError


def run_key(key: str | None) -> bytes:
    """The HMAC key for placeholders: ``--key`` as given, else 32 random bytes for this run."""
    return key.encode("utf-8") if key else _random.token_bytes(32)


def path_options(paths: bool, environ: dict[str, str] | None = None) -> tuple[str | None, str | None]:
    """The home folder and user name ``--paths`` replaces (from HOME and USER/LOGNAME)."""
    if not paths:
        return None, None
    env = dict(os.environ) if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    user = env.get("USER") or env.get("LOGNAME") or (Path(home).name if home else None)
    return home or None, user or None


@dataclass(slots=True)
class RedactResult:
    source: str
    #: Where the redacted session went (None: a dry run wrote nothing).
    output: str | None
    backup: str | None
    stats: RedactStats


def _lines(path: str) -> Iterator[bytes]:
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise PitoolsError(f"cannot read: {exc.strerror or exc}", path=path) from None
    with fh:
        yield from fh


def redact_file(
    path: str,
    *,
    detector: Detector,
    options: RedactOptions,
    output: str | None = None,
    in_place: bool = False,
    backup: bool = True,
    dry_run: bool = False,
) -> RedactResult:
    """Redact ``path`` into ``output`` (a new file) or in place (atomic, backed up, refused if changed);
    with ``dry_run``, only count what would be replaced (nothing is written)."""
    if not os.path.isfile(path):
        raise PitoolsError("not a file", path=path)
    redactor = Redactor(detector, options, file=path)
    if dry_run:
        for _ in redactor.redact_lines(_lines(path)):
            pass
        return RedactResult(path, None, None, redactor.stats)
    if in_place:
        stamp = store.stamp(path)
        # The backup is the unredacted original, every secret in it: owner-only, whatever the
        # session's own mode (the result line says so; `scan DIR` reports such backups).
        made = store.atomic_replace(
            path, redactor.redact_lines(_lines(path)), expected=stamp, backup=backup, private_backup=True
        )
        return RedactResult(path, path, str(made) if made else None, redactor.stats)
    if output is None:
        raise PitoolsError("say where to write: -o OUT or --in-place", path=path)
    if os.path.abspath(output) == os.path.abspath(path):
        raise PitoolsError("-o names the input file; use --in-place to rewrite it", path=path)
    store.write_new(output, redactor.redact_lines(_lines(path)))
    return RedactResult(path, output, None, redactor.stats)


@contextlib.contextmanager
def redacted_copy(path: str, *, detector: Detector, options: RedactOptions) -> Iterator[tuple[str, RedactStats]]:
    """A redacted copy of ``path`` in a private temporary folder, removed afterwards (export --redact)."""
    with tempfile.TemporaryDirectory(prefix="pitools-redact-") as folder:
        os.chmod(folder, 0o700)
        target = os.path.join(folder, os.path.basename(path) or "session.jsonl")
        result = redact_file(path, detector=detector, options=options, output=target)
        yield target, result.stats
