"""``export --format otlp|atif`` (CLI glue): build (ops), encode (render), then write (store) or send."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pitools.core.session.load import LoadedSession

if TYPE_CHECKING:
    from pitools.cli.output import Output


def export_traces(
    out: Output,
    loaded: LoadedSession,
    format_: str,
    *,
    leaf_ref: str | None,
    all_: bool,
    output: str | None,
    endpoint: str | None,
    legacy: bool = False,
    images: bool = True,
    overwrite: bool = False,
) -> int:
    """Export the chosen branches as OTLP traces or ATIF trajectories; returns the exit code.
    ``overwrite`` (--force) lets ``output`` replace an existing file."""
    from pitools.ops import traces as ops

    if format_ == "otlp":
        from pitools.render.export_otlp import otlp_json_chunks, otlp_request

        traces = ops.build_traces(loaded, leaf_ref, all_, legacy=legacy)
        spans = sum(len(t.spans) for t in traces)
        if endpoint is not None:
            from pitools.ops.otlp_send import send

            result = send(otlp_request(traces), endpoint)
            out.message(f"sent {len(traces)} trace(s), {spans} span(s) to {result.url} (HTTP {result.status})")
            if result.rejected_spans:
                out.message(f"the collector rejected {result.rejected_spans} span(s): {result.message}")
                return 1
            return 0
        chunks = otlp_json_chunks(traces)
    else:
        from pitools.render.export_atif import atif_chunks

        trajectories = ops.build_trajectories(loaded, leaf_ref, all_, images=images)
        if not all_ and not trajectories:
            from pitools.errors import PitoolsError

            # One trajectory was asked for and the branch is empty (the default leaf is a line
            # that is not an entry): say so instead of writing a document with nothing in it.
            raise PitoolsError(
                "no branch to export: the leaf is not an entry of the file; choose one with --leaf", path=loaded.path
            )
        chunks = atif_chunks(trajectories, single=not all_, release=True)
    # Serialized a span or a step at a time while written: the document is never held whole.
    out.write_chunks_to(output, chunks, overwrite=overwrite)
    return 0


def export_every_branch(
    out: Output,
    loaded: LoadedSession,
    format_: str,
    output: str | None,
    *,
    legacy: bool = False,
    images: bool = True,
    overwrite: bool = False,
) -> int:
    """``--all --format otlp|atif`` written a branch at a time: each branch's trace or
    trajectory is built only once the previous one is written, so at most one exists at a
    time (building every branch first peaked at 5-7x the file on a 21-branch session)."""
    from pitools.ops import traces as ops

    header = loaded.session.header or {}
    copied = ops.copied_entry_ids(loaded)
    # The branches themselves (lists of the loaded entries, a few hundred KB each) are found
    # first, so a refused tree (a parentId cycle) still fails before anything is written.
    branches = [b for b in (loaded.index.get_branch(leaf) for leaf in ops.branch_leaves(loaded, None, True)) if b]
    chunks: Iterator[bytes]
    if format_ == "otlp":
        from pitools.core.views.otel import branch_traces
        from pitools.render.export_otlp import otlp_json_chunks

        chunks = otlp_json_chunks(branch_traces(header, branches, copied=copied, legacy=legacy))
    else:
        from pitools.core.views.atif import branch_trajectories
        from pitools.render.export_atif import atif_chunks

        trajectories = branch_trajectories(header, branches, copied=copied, images=images)
        chunks = atif_chunks(trajectories, single=False, release=True)
    out.write_chunks_to(output, chunks, overwrite=overwrite)
    return 0
