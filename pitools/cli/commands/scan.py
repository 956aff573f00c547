"""``pitools scan``: find secrets in sessions; exit 1 when any is found."""

from __future__ import annotations

import click

from pitools.cli.commands._secrets_options import ValueArgs, value_options
from pitools.cli.options import format_option, session_paths_argument
from pitools.cli.output import Output, pass_output


@click.command("scan")
@session_paths_argument("paths", required=True)
@format_option(
    "human",
    "json",
    "github",
    "sarif",
    help="json is a stable interface (schemas/output/scan.schema.json); sarif is SARIF 2.1.0.",
)
@value_options
@click.option(
    "--baseline",
    metavar="FILE",
    default=None,
    help="Accept the findings listed in FILE (a previous `scan --format json`; it holds fingerprints, not secrets).",
)
@pass_output
def command(
    out: Output,
    paths: tuple[str, ...],
    format_: str,
    values: ValueArgs,
    baseline: str | None,
) -> int:
    """Find secrets in session files: API keys, tokens, private keys, passwords, given values.

    Every string a session holds is scanned (message text, thinking, tool-call arguments, tool
    results, summaries, custom data, labels, the session name, the header, lines Pi skips),
    decoded from its JSON escapes, and base64 text blocks are decoded and scanned too. Each
    finding shows the file, line, entry id, field path, kind and a masked preview (kind, first
    characters, length): never the secret. Exit status 1 when anything is found. A folder is
    searched for every ``*.jsonl`` below it and every backup pitools kept of one
    (``*.jsonl.bak-<time>``: the original a ``redact --in-place`` left behind).

    \b
    Examples:
      pitools scan ~/.pi/agent/sessions
      pitools scan session.jsonl --value "$MY_DB_PASSWORD" --env
      pitools scan session.jsonl --format json > baseline.json
      pitools scan sessions/ --baseline baseline.json --format sarif > scan.sarif
    """
    from pitools.ops.scan import is_backup, load_baseline, scan_file, session_files

    detector = values.detector(out)
    files = session_files(paths)
    if not files:
        from pitools.cli.options import no_session_files

        no_session_files(paths)
    accepted_prints = load_baseline(baseline) if baseline else set()
    findings = []
    accepted = 0
    for path in files:
        for f in scan_file(path, detector):
            if accepted_prints and f.fingerprint in accepted_prints:
                accepted += 1
            else:
                findings.append(f)
    from pitools.render import secrets as R

    if format_ == "json":
        out.write_json(R.scan_json(findings, len(files), accepted))
    elif format_ == "sarif":
        out.write_json(R.sarif(findings))
    elif format_ == "github":
        for line in R.github_lines(findings):
            out.echo(line)
        out.message(R.summary(findings, len(files), accepted))
    else:
        R.render_human(out.console(), findings, len(files), accepted)
    backups = sorted({f.file for f in findings if f.file and is_backup(f.file)})
    if backups:
        out.message(
            f"{len(backups)} of the files with findings are backups pitools kept (*.jsonl.bak-*, e.g. after "
            f"`redact --in-place`): they hold the original secrets; delete them once checked ({backups[0]})"
        )
    return 1 if findings else 0
