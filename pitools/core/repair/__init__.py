"""Planning ``pitools repair`` and ``pitools slim``: pure functions from bytes to new lines.

Nothing here reads or writes files: :mod:`pitools.ops.repair` and :mod:`pitools.ops.slim` do,
through :mod:`pitools.store`.
"""

from __future__ import annotations

#: ``validate`` codes that ``pitools repair`` fixes, and how (for ``validate``'s hint and
#: ``validate --explain``). Codes not listed here are left alone by repair.
REPAIRABLE_CODES: dict[str, str] = {
    "utf8-bom": "the byte order mark is removed",
    "crlf-line-endings": "CRLF line ends become LF",
    "unterminated-last-line": "a torn last line is terminated when it parses, else dropped (shown in the report)",
    "malformed-json": "a fused line is split into its entries (a torn prefix is dropped); other bad lines are removed",
    "blank-line": "blank lines are removed",
    "falsy-line": 'lines that parse to null/false/0/"" are removed',
    "non-object-line": "lines that parse to an array, number or string are removed",
    "missing-header": "the header is moved first, or rebuilt (id from the file name, cwd from Pi's folder or --cwd)",
    "invalid-header": "the header gets a string id (from the file name, else a new one)",
    "header-not-first": "the lines before the header, which Pi skips, are removed",
    "duplicate-id": "the earlier duplicates are renamed (Pi already resolves the id to the last one)",
    "parent-cycle": "the link that closes the loop is cut, keeping the longest chain",
    "self-parent": "the entry's parentId becomes null (Pi's tree already shows it as a root)",
    "pi-would-crash": "the smallest change that lets Pi load the entry and build the context, when one exists",
    "orphan-entry": "reported; `--reattach` links each orphan to the previous entry in file order",
}

__all__ = ["REPAIRABLE_CODES"]
