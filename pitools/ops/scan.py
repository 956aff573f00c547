"""``pitools scan``: expand FILE|DIR arguments, scan each file, drop baseline findings."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from pitools.core.secrets.detect import Detector
from pitools.core.secrets.scan import Finding, scan_chunks
from pitools.errors import PitoolsError

_CHUNK = 4 << 20


#: The backups pitools' writers keep (``store.backup_path``): the original, secrets included.
_BACKUP_NAME = re.compile(r"\.jsonl\.bak-\d{8}T\d{6,12}Z\Z")


def is_backup(path: str) -> bool:
    """A backup pitools kept next to a session (``<name>.jsonl.bak-<UTC time>``)."""
    return _BACKUP_NAME.search(os.path.basename(path)) is not None


def session_files(paths: Iterable[str]) -> list[str]:
    """Files as given; directories as every ``*.jsonl`` below them, and every backup pitools kept
    of one (``*.jsonl.bak-<time>``: ``redact --in-place`` leaves the secrets in it), sorted."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = [*Path(p).rglob("*.jsonl"), *(f for f in Path(p).rglob("*.jsonl.bak-*") if is_backup(str(f)))]
            out.extend(str(f) for f in sorted(found) if f.is_file())
        else:
            out.append(p)
    return out


def scan_file(path: str, detector: Detector) -> list[Finding]:
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise PitoolsError(f"cannot read: {exc.strerror or exc}", path=path) from None
    with fh:
        return list(scan_chunks(_chunks(fh), detector, file=path))


def _chunks(fh: Any) -> Iterator[bytes]:
    """~4 MB pieces of the file, each cut after a newline (a longer line comes whole)."""
    tail = b""
    while block := fh.read(_CHUNK):
        data = tail + block
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            tail = data
            continue
        yield data[:cut]
        tail = data[cut:]
    if tail:
        yield tail


def load_baseline(path: str) -> set[str]:
    """Fingerprints accepted by a baseline: a ``scan --format json`` document (or a list of them)."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise PitoolsError(f"cannot read the baseline: {exc.strerror or exc}", path=path) from None
    except orjson.JSONDecodeError:
        raise PitoolsError("the baseline is not JSON (write one with scan --format json)", path=path) from None
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list):
        raise PitoolsError('the baseline has no "findings" list (write one with scan --format json)', path=path)
    return {f["fingerprint"] for f in findings if isinstance(f, dict) and isinstance(f.get("fingerprint"), str)}
