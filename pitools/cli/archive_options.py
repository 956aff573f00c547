"""The option table of each archive command (``search``, ``usage``, ``ls``): one list per command.

The click commands' parameters are made from it (:func:`pitools.cli.options.table_params`,
which ``--help`` shows), and so is the warm search's click-free reading of ``search``
(:func:`pitools.cli.fast_search.parse`): a name, a default, a choice or a help text is written
once. ``tests/cli/test_option_table.py`` walks every ``search`` parameter through both.

Click-free and light on purpose: the lean ``search`` reads it on every run (plain classes, no
``typing``, no ``dataclasses``; choices that live elsewhere are imported only for their command).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: ``--format``'s help, for every command that has one.
FORMAT_HELP = "Output format. json is a stable interface (schemas/output/)."

#: The commands that have a table.
ARCHIVE_COMMANDS = ("search", "usage", "ls")


class Param:
    """One parameter: an option (``--name``) or the positional ``argument``.

    ``kind``: ``flag``, ``value``, ``multiple`` (repeatable) or ``argument``; ``min_int`` makes
    the value an integer of at least that (click's ``IntRange(min=...)``).
    """

    __slots__ = ("choices", "default", "dest", "help", "kind", "metavar", "min_int", "name", "show_default")

    def __init__(
        self,
        name: str,
        dest: str,
        kind: str = "value",
        *,
        help: str = "",
        default: Any = None,
        choices: tuple[str, ...] | None = None,
        min_int: int | None = None,
        metavar: str | None = None,
        show_default: bool = False,
    ) -> None:
        self.name = name
        self.dest = dest
        self.kind = kind
        self.help = help
        self.default = () if kind == "multiple" else (False if kind == "flag" else default)
        self.choices = choices
        self.min_int = min_int
        self.metavar = metavar
        self.show_default = show_default

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.dest!r}, {self.kind!r}, default={self.default!r})"


def _format(*choices: str) -> Param:
    return Param("--format", "format_", choices=choices, default=choices[0], show_default=True, help=FORMAT_HELP)


def _time(name: str, help: str) -> Param:
    return Param(name, name[2:], metavar="TIME", help=help)


_SINCE = "From TIME (2026-03-01, 2026-03, ISO time, 7d)."
_UNTIL = "Up to TIME (a date includes that day)."
_PROJECT = "Only sessions whose cwd contains TEXT."
_CWD = "Only sessions started in DIR."
_SESSION = "Only this session (path, id or id prefix)."


def table(command: str) -> list[Param]:
    """The parameters of ``command``, in ``--help`` order (KeyError: not an archive command)."""
    if command == "search":
        from pitools.ops.search_core import ROLE_CHOICES

        return [
            Param("query", "query", "argument"),
            Param(
                "--regex", "regex", "flag", help="QUERY is a regular expression; scan the text instead of the index."
            ),
            Param("--thinking", "thinking", "flag", help="Search thinking blocks too."),
            Param("--role", "roles", "multiple", choices=ROLE_CHOICES, help="Only entries of this role."),
            Param("--tool", "tools", "multiple", metavar="NAME", help="Only tool calls/results of this tool."),
            Param("--project", "project", metavar="TEXT", help=_PROJECT),
            Param("--cwd", "cwd", metavar="DIR", help=_CWD),
            Param("--session", "session", metavar="REF", help=_SESSION),
            _time("--since", _SINCE),
            _time("--until", _UNTIL),
            Param("--in-context", "in_context", "flag", help="Only what the context at the default leaf still holds."),
            Param(
                "--branch",
                "branch",
                choices=("current", "all"),
                default="all",
                show_default=True,
                help="current: only the default leaf's path; all: every branch.",
            ),
            Param("--limit", "limit", min_int=0, default=50, show_default=True, help="At most this many hits."),
            Param("--timezone", "timezone", metavar="TZ", help="Zone of --since/--until dates."),
            Param("--session-dir", "session_dir", metavar="DIR", help="Search only this session folder."),
            _format("human", "json"),
        ]
    if command == "usage":
        from pitools.core.views.usage_report import BY_CHOICES

        return [
            Param("--by", "by", choices=BY_CHOICES, default="day", show_default=True, help="One row per this."),
            _time("--since", _SINCE),
            _time("--until", _UNTIL),
            Param("--timezone", "timezone", metavar="TZ", help="Zone for days/weeks/months (default local)."),
            Param("--breakdown", "breakdown", "flag", help="Per model inside each row."),
            Param("--project", "project", metavar="TEXT", help=_PROJECT),
            Param("--cwd", "cwd", metavar="DIR", help=_CWD),
            Param("--session", "session", metavar="REF", help=_SESSION),
            Param("--session-dir", "session_dir", metavar="DIR", help="Only this session folder."),
            _format("human", "json", "csv"),
        ]
    if command == "ls":
        from pitools.ops.queries import SORTS

        return [
            Param("--all", "all_", "flag", help="Every session Pi keeps, not just this directory's."),
            Param("--cwd", "cwd", metavar="DIR", help="List for DIR instead of the current directory."),
            Param(
                "--session-dir",
                "session_dir",
                metavar="DIR",
                help="Session directory (default: PI_CODING_AGENT_SESSION_DIR, the sessionDir setting, or Pi's "
                "per-directory folder under ~/.pi/agent/sessions).",
            ),
            _format("human", "json", "tsv"),
            Param("--no-cache", "no_cache", "flag", help="Read every file again instead of using the archive index."),
            Param("--limit", "limit", min_int=1, metavar="N", help="Show the first N sessions."),
            Param(
                "--since",
                "since",
                metavar="WHEN",
                help="Only sessions active since WHEN: a date (2026-03-01), a date-time, or an age (30m, 12h, 7d, 2w).",
            ),
            Param(
                "--sort",
                "sort",
                choices=tuple(SORTS),
                default="activity",
                show_default=True,
                help="Order: newest activity (Pi's), newest created, or largest size/tokens/cost/messages first; "
                "name A-Z.",
            ),
        ]
    raise KeyError(command)
