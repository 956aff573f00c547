"""The command table: each subcommand's module and one-line summary, read by the package's
:func:`~pitools.cli.main`, the click group and ``pitools help``. A leaf module (it imports nothing),
so the click group can read it without importing the package that loads the group.
"""

from __future__ import annotations

#: One command a line, in the order ``pitools --help`` lists them: its name, then its summary.
#: The command ``x`` lives in ``pitools.cli.commands.x`` (imported only when it runs).
_TABLE = """
inspect   Summarise a session: header, counts, leaves, labels, usage.
validate  Check session files; exit 1 when problems are found.
migrate   Migrate a v1/v2 session to v3 (prints, writes -o, or --in-place).
context   Replay what Pi sends to the model at a leaf.
request   The body pi-ai would send a provider at a leaf; --check it.
heal      Heal a wedged session for a model with Pi's own context edits.
tree      Draw the session tree as Pi's /tree shows it.
branches  List the leaves (branches) of a session.
compact   Plan (the default) or apply (--apply) a compaction like Pi.
watch     Follow a running session: context tokens vs window and compaction.
navigate  Leave a branch as Pi's /tree does: show or write the branch summary.
ls        List sessions where Pi keeps them (this directory, or --all).
export    Export a branch or the tree as Markdown, HTML, JSONL, OTLP or ATIF.
fork      New session from the path to an entry, as Pi's /fork does.
clone     New session holding the path to a leaf, as Pi's /clone does.
index     Build or update the archive index (ls, search and usage use it).
search    Full-text search over every session, with each hit's branch.
usage     Tokens and cost by day/week/month/model/project, forks counted once.
serve     Browse, search and chart every session in a local, read-only web app.
repair    Repair a damaged session so Pi loads it; every fix reported.
slim      Shrink a session: drop compacted-away images, output, thinking.
scan      Find secrets (API keys, tokens, passwords) in sessions.
redact    Replace the secrets in a session with placeholders.
dataset   Write sessions as Parquet/JSONL tables for DuckDB, Spark, Trino.
help      Show the help of pitools or of one command (pitools help tree).
"""

#: name -> (module, summary).
COMMANDS: dict[str, tuple[str, str]] = {
    name: (f"pitools.cli.commands.{name}", summary.strip())
    for name, _, summary in (line.partition(" ") for line in _TABLE.strip().splitlines())
}

META_DEBUG = "pitools.debug"
