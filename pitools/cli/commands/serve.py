"""``pitools serve``: a local, read-only web app over the archive (list, search, usage, viewer)."""

from __future__ import annotations

import click

from pitools.cli.output import Output, pass_output


@click.command("serve")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port on 127.0.0.1 (0: any free one)."
)
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the URL.")
@click.option("--session-dir", metavar="DIR", default=None, help="Serve only this session folder.")
@pass_output
def command(out: Output, port: int, no_browser: bool, session_dir: str | None) -> int:
    """Serve the session list, search, usage charts and the session viewer on 127.0.0.1.

    The first line on stdout is the URL: a random root path and access token. Requests without
    the token (or the cookie it sets, which only this app's root path receives) are refused, as
    are requests whose Host is not this loopback address (DNS rebinding). The browser opened
    gets a one-time code instead of the token. The app only reads: nothing it does writes to a
    session. A session page follows the file as Pi appends to it. JSON endpoints under the root
    give what the commands print with --format json: api/ls, api/search?q=...,
    api/usage?by=...; stop with Ctrl-C.

    \b
    Examples:
      pitools serve
      pitools serve --port 8765 --no-browser
    """
    from pitools.cli.serve_app import serve

    return serve(out, port=port, open_browser=not no_browser, session_dir=session_dir)
