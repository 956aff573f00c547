"""The web app behind ``pitools serve``: the standard library's threading HTTP server.

Why no framework: the app serves a handful of GET routes to one local user; http.server with
a thread per request is enough, and it adds no dependency. Every route is read-only.

Safety: the server binds to 127.0.0.1 only; every request must carry the access token (the
``token`` query parameter, which sets an HttpOnly, SameSite=Strict cookie) and a Host header
naming this loopback address and port (a DNS-rebinding page has another Host). Every route
lives under a random root path, and the cookie (named per port) is bound to it: browsers send
cookies to every port of a host, so other local servers never see it. The browser ``serve``
opens gets a one-time code instead of the token (a command line is readable by other local
users); the server swaps it for the cookie once. Connections are capped, and a client that
stops sending or reading is dropped after a timeout. The JSON
endpoints run the very functions ``ls``, ``search`` and ``usage`` run for ``--format json``,
writing into a buffer instead of stdout, so their bytes are the commands' bytes.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from pitools.cli.output import Output

if TYPE_CHECKING:
    from pitools.ops.queries import SessionFilter

#: An unknown session id lists the archive again at most this often (seconds).
LIST_TTL = 2.0


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_body(result: Any) -> bytes:
    """A use case's result as the bytes its command prints with ``--format json`` (one line)."""
    from pitools.core.js.json.encode import to_json_bytes

    return to_json_bytes(result.to_json()) + b"\n"


class App:
    """Shared state of one server: its token, its port, the archive it shows."""

    def __init__(self, *, session_dir: str | None, token: str | None = None) -> None:
        self.session_dir = session_dir
        self.token = token or secrets.token_urlsafe(24)
        #: The path every page and endpoint lives under, and the access cookie's Path.
        self.root = "/pitools-" + secrets.token_urlsafe(12)
        self.port = 0
        #: One-time codes for the URL a browser is opened on (its command line is readable by
        #: other local users: /proc/PID/cmdline); each is swapped for the cookie once.
        self._codes: set[str] = set()
        self._lock = threading.Lock()
        #: session id → {the file's path as listed → that path with ~ expanded}
        self._paths: dict[str, dict[str, str]] = {}
        self._paths_at = -LIST_TTL
        #: Where a request that failed after its status was sent (or with a 500) is reported:
        #: one line each; ``serve`` points it at stderr, so a page cut short is never silent.
        self.report: Callable[[str], None] = lambda line: None

    @property
    def cookie(self) -> str:
        """The access cookie's name: one per port (two servers never overwrite each other's)."""
        return f"pitools_token_{self.port}"

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{self.root}{path}"

    def one_time_code(self) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes.add(code)
        return code

    def redeem(self, code: str) -> bool:
        """Whether ``code`` is a one-time code not used yet; it is used now."""
        with self._lock:
            for known in self._codes:
                if _same(code, known):
                    self._codes.discard(known)
                    return True
        return False

    # -- the JSON endpoints: the query string read into the commands' query objects ---------------
    def api_ls(self, q: dict[str, list[str]]) -> bytes:
        from pitools.ops.listing import list_archive
        from pitools.ops.queries import SORTS, ListQuery, activity_since

        query = ListQuery(
            all=_flag(q, "all", default=True),
            cwd=_one(q, "cwd"),
            session_dir=self.session_dir,
            since=activity_since(_one(q, "since")),
            sort=_choice(q, "sort", SORTS, "activity"),
            limit=_int(q, "limit", None, minimum=1),
        )
        return json_body(list_archive(query))

    def api_search(self, q: dict[str, list[str]]) -> bytes:
        from pitools.ops.queries import SearchQuery
        from pitools.ops.search import search_archive
        from pitools.ops.search_core import ROLE_CHOICES

        roles = tuple(q.get("role", []))
        for role in roles:
            if role not in ROLE_CHOICES:
                raise ApiError(400, f"role must be one of {', '.join(ROLE_CHOICES)}")
        branch = _one(q, "branch") or "all"
        if branch not in ("current", "all"):
            raise ApiError(400, "branch must be current or all")
        query = SearchQuery(
            _one(q, "q") or "",
            regex=_flag(q, "regex"),
            thinking=_flag(q, "thinking"),
            roles=roles,
            tools=tuple(q.get("tool", [])),
            in_context=_flag(q, "in_context"),
            branch=branch,
            limit=_int(q, "limit", 50, minimum=0) or 0,
            where=_archive_filters(q),
            session_dir=self.session_dir,
        )
        return json_body(search_archive(query))

    def api_usage(self, q: dict[str, list[str]]) -> bytes:
        from pitools.core.views.usage_report import BY_CHOICES
        from pitools.ops.archive import usage_archive
        from pitools.ops.queries import UsageQuery

        query = UsageQuery(
            by=_choice(q, "by", BY_CHOICES, "day"),
            breakdown=_flag(q, "breakdown"),
            where=_archive_filters(q),
            session_dir=self.session_dir,
        )
        return json_body(usage_archive(query))

    # -- sessions ---------------------------------------------------------------------------------
    def session_path(self, session_id: str, listed: str | None = None) -> str:
        """The file of the session with this id (from the listing ``ls --all`` gives). Two files
        may hold the same id (a copied session): ``listed``, the file's path as the listing
        gives it, picks one of them; without it such an id is refused, never guessed."""
        with self._lock:
            known = self._paths.get(session_id)
            path = _pick(known, listed)
            if path is not None and os.path.isfile(path):
                return path  # the poll of an open page must not list the archive every second
            if path is None and time.monotonic() - self._paths_at < LIST_TTL:
                return _chosen(known, listed)  # refused: an unknown id lists again at most every LIST_TTL
            from pitools.ops.listing import list_sessions

            listing = list_sessions(session_dir=self.session_dir, all_=True).to_json()
            paths: dict[str, dict[str, str]] = {}
            for s in listing.get("sessions", []):
                if isinstance(s.get("id"), str) and isinstance(s.get("path"), str):
                    paths.setdefault(s["id"], {})[s["path"]] = os.path.expanduser(s["path"])
            self._paths = paths
            self._paths_at = time.monotonic()
            return _chosen(paths.get(session_id), listed)

    @staticmethod
    def stamp(path: str) -> str:
        st = os.stat(path)
        return f"{st.st_size}-{st.st_mtime_ns}"

    def _load(self, path: str) -> tuple[Any, str, Any]:
        """The session loaded lean, the stamp of the file it was read from, and the read
        model's facts of every entry, gathered as the loader parsed it."""
        from pitools.ops.viewer import load_for_page

        stamp = self.stamp(path)
        # freeze=False: a command exempts its one session from cyclic collection for speed; a
        # server loads session after session, and frozen objects would never be collected.
        loaded, facts = load_for_page(path, freeze=False)
        return loaded, stamp, facts

    def _prefix(self, path: str, loaded: Any, stamp: str) -> dict[str, Any] | None:
        """The page's prefix (:func:`~pitools.ops.viewer.session_prefix`); None if the file
        changed while it was read (its entries may mix two versions: the next poll, seeing a
        new stamp, then gets them all again)."""
        from pitools.ops.viewer import session_prefix

        prefix = session_prefix(loaded)
        try:
            same = self.stamp(path) == stamp
        except OSError:
            same = False
        return prefix if same else None

    def session_page(self, session_id: str, leaf: str | None, listed: str | None = None) -> Stream:
        """The viewer page, in pieces as they are serialized (a 40 MB session is never held as
        one string); the session is read and its read model built before the first piece."""
        from pitools.ops.viewer import close_loaded, viewer_chunks

        path = self.session_path(session_id, listed)
        loaded, stamp, facts = self._load(path)
        try:
            base = self.root + "/session/" + quote(session_id, safe="")
            query = "" if listed is None else "?path=" + quote(listed, safe="")
            live = {
                "stamp": stamp,
                "stampUrl": base + "/stamp" + query,
                "dataUrl": base + "/data" + query,
                "home": self.root + "/",
                "prefix": self._prefix(path, loaded, stamp),
            }
            pieces = viewer_chunks(loaded, loaded.leaf(leaf) if leaf else None, live=live, facts=facts)
        except BaseException:
            close_loaded(loaded)
            raise
        return Stream(pieces, lambda: close_loaded(loaded))

    def session_data(
        self, session_id: str, have: int = 0, upto: int = 0, sha: str = "", listed: str | None = None
    ) -> Stream:
        """What a page whose session changed needs: a first line ``{"stamp", "from", "meta",
        "prefix"}`` (the read model again, and the prefix to send next time), a newline, then
        one entry per line from position ``from``. A page that holds ``have`` entries read from
        the file's first ``upto`` bytes, whose SHA-256 is ``sha``, gets only the entries after
        them when the file still starts with those very bytes (Pi appends); otherwise (an
        in-place rewrite) ``from`` is 0 and it gets them all. The first line always ends with
        a newline, also when no entry follows (a ``touch``). In pieces, as for the page."""
        from pitools.core.js.json.encode import to_json_bytes
        from pitools.core.views.viewer import build_viewer_model
        from pitools.ops.viewer import close_loaded, entry_texts, settings_resolver, unchanged_prefix
        from pitools.render.viewer_html import embed_json

        path = self.session_path(session_id, listed)
        loaded, stamp, facts = self._load(path)
        try:
            model = build_viewer_model(loaded, None, settings_resolver(loaded), facts=facts)
            start = have if have and sha and unchanged_prefix(loaded, have, upto, sha) else 0
            prefix = self._prefix(path, loaded, stamp)
            head = to_json_bytes({"stamp": stamp, "from": start, "meta": model.meta_json(), "prefix": prefix})
        except BaseException:
            close_loaded(loaded)
            raise
        del model

        def pieces() -> Iterator[bytes]:
            yield head + b"\n"
            batch: list[bytes] = []
            for text in entry_texts(loaded, start=start):
                batch.append(embed_json(text))
                if len(batch) >= 256:
                    yield b"\n".join(batch) + b"\n"
                    batch = []
            if batch:
                yield b"\n".join(batch) + b"\n"

        return Stream(pieces(), lambda: close_loaded(loaded))


class Stream:
    """Byte pieces to send, and what to release once they are sent, or not (a HEAD request, a
    client gone): :meth:`close` always runs ``done``, once, even if iteration never started
    (a generator's own ``finally`` would not run then)."""

    def __init__(self, pieces: Iterable[bytes], done: Callable[[], None]) -> None:
        self._pieces = pieces
        self._done: Callable[[], None] | None = done

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._pieces)

    def close(self) -> None:
        done, self._done = self._done, None
        if done is None:
            return
        try:
            close = getattr(self._pieces, "close", None)
            if close is not None:
                close()
        finally:
            done()


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def _request_path(target: str) -> str:
    """The request's path without its query (which may carry the token or a login code)."""
    return urlsplit(target).path


def _same(given: str, secret: str) -> bool:
    """A constant-time comparison of a presented secret with the real one."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), secret.encode("utf-8"))


def _pick(files: dict[str, str] | None, listed: str | None) -> str | None:
    """The file among ``files`` (listed path → path) that ``listed`` names, or the only one."""
    if not files:
        return None
    if listed is not None:
        return files.get(listed)
    return next(iter(files.values())) if len(files) == 1 else None


def _chosen(files: dict[str, str] | None, listed: str | None) -> str:
    path = _pick(files, listed)
    if path is not None:
        return path
    if files and listed is None:
        raise ApiError(409, "two or more session files have this id: open the session from the list")
    raise ApiError(404, "no session with this id in the archive")


def _one(q: dict[str, list[str]], key: str) -> str | None:
    values = q.get(key)
    return values[-1] if values else None


def _archive_filters(q: dict[str, list[str]]) -> SessionFilter:
    """The entry filters search and usage share (which sessions, which time span, in which zone)."""
    from pitools.ops.queries import SessionFilter

    keys = ("project", "cwd", "session", "since", "until", "timezone")
    return SessionFilter(*(_one(q, key) for key in keys))


def _choice(q: dict[str, list[str]], key: str, choices: Collection[str], default: str) -> str:
    """``key``'s value (``default`` when absent or empty), which must be one of ``choices``."""
    value = _one(q, key) or default
    if value not in choices:
        raise ApiError(400, f"{key} must be one of {', '.join(choices)}")
    return value


def _flag(q: dict[str, list[str]], key: str, default: bool = False) -> bool:
    value = _one(q, key)
    if value is None:
        return default
    return value.lower() not in ("", "0", "false", "no")


def _int(q: dict[str, list[str]], key: str, default: int | None, *, minimum: int) -> int | None:
    value = _one(q, key)
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except ValueError:
        raise ApiError(400, f"{key} must be a whole number") from None
    if n < minimum:
        raise ApiError(400, f"{key} must be at least {minimum}")
    return n


#: Sent with every answer.
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class Handler(BaseHTTPRequestHandler):
    server_version = "pitools"
    sys_version = ""
    app: App  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the terminal shows the URL line only

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in {**_HEADERS, **(extra or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_stream(self, pieces: Stream, ctype: str) -> None:
        """A 200 whose body is written piece by piece as it is made; with no length known, the
        end of the connection ends it (HTTP/1.0). The pieces' generator is always closed."""
        try:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", ctype)
            self.send_header("Connection", "close")
            for k, v in _HEADERS.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                try:
                    for piece in pieces:
                        self.wfile.write(piece)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the browser left: nothing to report
                except Exception as exc:  # the status is sent: a failure can only cut the page short
                    self.app.report(f"{_request_path(self.path)}: the page was cut short: {_first_line(exc)}")
        finally:
            pieces.close()
        self.close_connection = True

    def _refuse(self, status: int, message: str) -> None:
        self._send(status, (message + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        port = self.app.port
        return host in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _cookie_token(self) -> str | None:
        from http.cookies import CookieError, SimpleCookie

        raw = self.headers.get("Cookie")
        if not raw:
            return None
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return None
        morsel = jar.get(self.app.cookie)
        return morsel.value if morsel is not None else None

    def do_POST(self) -> None:
        self._refuse(HTTPStatus.METHOD_NOT_ALLOWED, "read-only: only GET requests")

    do_PUT = do_DELETE = do_PATCH = do_POST

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            self._refuse(HTTPStatus.FORBIDDEN, "refused: the Host header is not this server's loopback address")
            return
        parts = urlsplit(self.path)
        app = self.app
        # Everything lives under the server's own random root, and the cookie is bound to it:
        # cookies ignore ports, so with Path=/ every other server on 127.0.0.1 would get it.
        if not (parts.path + "/").startswith(app.root + "/"):
            self._refuse(HTTPStatus.NOT_FOUND, "not found: open the URL pitools serve printed")
            return
        if parts.path == app.root:  # the home page's links are relative to root + "/"
            location = app.root + "/" + ("?" + parts.query if parts.query else "")
            self._send(HTTPStatus.PERMANENT_REDIRECT, b"", "text/plain", {"Location": location})
            return
        path = parts.path[len(app.root) :]
        q = parse_qs(parts.query, keep_blank_values=True)
        given, once = _one(q, "token"), _one(q, "login")
        if (given is not None and _same(given, app.token)) or (once is not None and app.redeem(once)):
            # The token moves into a cookie, and the address loses it (history, screenshots).
            rest = "&".join(f"{quote(k)}={quote(v)}" for k, vs in q.items() if k not in ("token", "login") for v in vs)
            location = app.root + path + ("?" + rest if rest else "")
            cookie = f"{app.cookie}={app.token}; HttpOnly; SameSite=Strict; Path={app.root}/"
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": location, "Set-Cookie": cookie})
            return
        cookie_token = self._cookie_token()
        if cookie_token is None or not _same(cookie_token, app.token):
            self._refuse(HTTPStatus.UNAUTHORIZED, "refused: open the URL pitools serve printed (it carries the token)")
            return
        try:
            self._route(path, q)
        except ApiError as exc:
            self._refuse(exc.status, str(exc))
        except BrokenPipeError:
            pass
        except Exception as exc:  # bad input in one session must not stop the server
            from pitools.errors import PitoolsError

            status = (
                HTTPStatus.UNPROCESSABLE_ENTITY if isinstance(exc, PitoolsError) else HTTPStatus.INTERNAL_SERVER_ERROR
            )
            if status == HTTPStatus.INTERNAL_SERVER_ERROR:
                app.report(f"{_request_path(self.path)}: internal error: {_first_line(exc)}")
            self._refuse(status, f"error: {_first_line(exc)}")

    def _route(self, path: str, q: dict[str, list[str]]) -> None:
        app = self.app
        json_type = "application/json; charset=utf-8"
        if path == "/":
            from pitools.render.viewer_html import home_page

            self._send(HTTPStatus.OK, home_page().encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/api/ls":
            self._send(HTTPStatus.OK, app.api_ls(q), json_type)
        elif path == "/api/search":
            self._send(HTTPStatus.OK, app.api_search(q), json_type)
        elif path == "/api/usage":
            self._send(HTTPStatus.OK, app.api_usage(q), json_type)
        elif path.startswith("/session/"):
            rest = path[len("/session/") :]
            sid, _, tail = rest.partition("/")
            sid = unquote(sid)
            if tail == "":
                page = app.session_page(sid, _one(q, "leaf"), _one(q, "path"))
                self._send_stream(page, "text/html; charset=utf-8")
            elif tail == "stamp":
                body = ('{"stamp":"' + app.stamp(app.session_path(sid, _one(q, "path"))) + '"}').encode()
                self._send(HTTPStatus.OK, body, json_type)
            elif tail == "data":
                have = _int(q, "have", 0, minimum=0) or 0
                upto = _int(q, "bytes", 0, minimum=0) or 0
                data = app.session_data(sid, have, upto, _one(q, "sha") or "", _one(q, "path"))
                self._send_stream(data, "text/plain; charset=utf-8")
            else:
                raise ApiError(404, "not found")
        else:
            raise ApiError(404, "not found")


#: Seconds a connection may stay silent (while sending its request, or not reading the answer)
#: before it is dropped: a half-sent or idle request must not hold a thread forever.
TIMEOUT = 30.0
#: Connections served at once; more are answered 503 and closed at once (every connection
#: costs a thread).
MAX_CONNECTIONS = 32


class Server(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` of them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[Handler], max_connections: int) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def make_server(
    app: App, port: int, *, timeout: float = TIMEOUT, max_connections: int = MAX_CONNECTIONS
) -> ThreadingHTTPServer:
    # ``timeout`` is the socket timeout StreamRequestHandler sets on each connection.
    handler = type("BoundHandler", (Handler,), {"app": app, "timeout": timeout})
    server = Server(("127.0.0.1", port), handler, max_connections)
    app.port = server.server_address[1]
    return server


def serve(out: Output, *, port: int, open_browser: bool, session_dir: str | None) -> int:
    app = App(session_dir=session_dir)
    app.report = out.message  # session text in a message is made safe there
    try:
        server = make_server(app, port)
    except OSError as exc:
        from pitools.errors import PitoolsError

        raise PitoolsError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    url = app.url(f"/?token={app.token}")
    out.stdout.write(url + "\n")
    out.stdout.flush()
    out.message("serving read-only; press Ctrl-C to stop")
    if open_browser:
        import webbrowser

        # Not the token: a browser's command line is visible to every local user; the server
        # swaps this code for the cookie once, then refuses it.
        once = app.url(f"/?login={app.one_time_code()}")
        threading.Thread(target=webbrowser.open, args=(once,), daemon=True).start()
    try:
        # Ctrl-C ends the loop: the one error handler (cli/errors.py) reports it, exit 130.
        server.serve_forever(poll_interval=0.25)
    finally:
        server.server_close()
    return 0
