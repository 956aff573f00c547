"""Exceptions raised by the core and by piconfig. The CLI turns each into one line on stderr.

A leaf module (it imports nothing of pitools), so every layer can raise these without
importing a layer above it."""

from __future__ import annotations


class PitoolsError(Exception):
    """Base class: a problem with the user's input or request (exit code 1)."""

    #: The process exit status this error ends a run with (1: bad input; see OptionValueError).
    exit_code = 1

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message}"


class OptionValueError(PitoolsError):
    """An option's value cannot be used (an unreadable date, a reversed range): a usage error, exit 2.

    For values only understood past the command line, or read by a front end without click
    (``pitools serve``'s query string, the warm search).
    """

    exit_code = 2


class SessionParseError(PitoolsError):
    """The file is not a Pi session Pi would load (no valid header, unreadable...)."""


class CycleError(PitoolsError):
    """A parentId walk revisits an entry; Pi itself would loop forever."""

    def __init__(self, message: str, *, cycle: list[str], path: str | None = None) -> None:
        super().__init__(message, path=path)
        self.cycle = cycle


class LeafError(PitoolsError):
    """A --leaf reference is unknown or ambiguous."""


class PiCrashError(PitoolsError):
    """Pi 1.6.0 itself throws on this input (e.g. a message entry with no message)."""


class SessionChangedError(PitoolsError):
    """The file changed on disk between reading and writing; nothing was written."""


class ConfigError(PitoolsError):
    """A Pi settings/models/auth file holds an invalid value."""


class ModelError(PitoolsError):
    """The summarizer model failed (HTTP error, length stop, tool call...)."""


class MissingExtraError(PitoolsError):
    """A feature needs an optional dependency group (``pi-session-tools[otel]``, ``pi-session-tools[dataset]``)."""


class ExportError(PitoolsError):
    """An export could not be delivered (the OTLP receiver refused it or could not be reached)."""
