"""The command table: each subcommand's module and one-line summary, read by the package's
:func:`~pitools.cli.main`, the click group and ``pitools help``. A leaf module (it imports nothing),
so the click group can read it without importing the package that loads the group.
"""

from __future__ import annotations

#: name -> "module:function"; modules are imported only when the command runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "inspect": (
        "pitools.cli.commands.inspect",
        "Summarise a session: header, counts, leaves, labels, usage.",
    ),
    "validate": ("pitools.cli.commands.validate", "Check session files; exit 1 when problems are found."),
    "migrate": (
        "pitools.cli.commands.migrate",
        "Migrate a v1/v2 session to v3 (prints, writes -o, or --in-place).",
    ),
    "context": ("pitools.cli.commands.context", "Replay what Pi sends to the model at a leaf."),
    "request": ("pitools.cli.commands.request", "The body pi-ai would send a provider at a leaf; --check it."),
    "tree": ("pitools.cli.commands.tree", "Draw the session tree as Pi's /tree shows it."),
    "branches": ("pitools.cli.commands.branches", "List the leaves (branches) of a session."),
    "compact": ("pitools.cli.commands.compact", "Plan (--dry-run) or apply (--apply) a compaction like Pi."),
    "navigate": (
        "pitools.cli.commands.navigate",
        "Leave a branch as Pi's /tree does: show or write the branch summary.",
    ),
    "ls": ("pitools.cli.commands.ls", "List sessions where Pi keeps them (this directory, or --all)."),
    "export": (
        "pitools.cli.commands.export",
        "Export a branch or the tree as Markdown, HTML, JSONL, OTLP or ATIF.",
    ),
    "fork": ("pitools.cli.commands.fork", "New session from the path to an entry, as Pi's /fork does."),
    "clone": ("pitools.cli.commands.clone", "New session holding the path to a leaf, as Pi's /clone does."),
    "index": ("pitools.cli.commands.index", "Build or update the archive index (ls, search and usage use it)."),
    "search": ("pitools.cli.commands.search", "Full-text search over every session, with each hit's branch."),
    "usage": ("pitools.cli.commands.usage", "Tokens and cost by day/week/month/model/project, forks counted once."),
    "serve": ("pitools.cli.commands.serve", "Browse, search and chart every session in a local, read-only web app."),
    "repair": (
        "pitools.cli.commands.repair",
        "Repair a damaged session so Pi loads it; every fix reported.",
    ),
    "slim": (
        "pitools.cli.commands.slim",
        "Shrink a session: drop compacted-away images, output, thinking.",
    ),
    "scan": ("pitools.cli.commands.scan", "Find secrets (API keys, tokens, passwords) in sessions."),
    "redact": (
        "pitools.cli.commands.redact",
        "Replace the secrets in a session with placeholders.",
    ),
    "help": ("pitools.cli.commands.help", "Show the help of pitools or of one command (pitools help tree)."),
    "dataset": ("pitools.cli.commands.dataset", "Write sessions as Parquet/JSONL tables for DuckDB, Spark, Trino."),
}

META_DEBUG = "pitools.debug"
