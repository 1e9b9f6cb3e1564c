"""`FakeProviderServer`: a local HTTP server that answers the real OpenAI and Anthropic SDK
clients with scripted replies and records every request it receives.

It serves OpenAI Responses (`POST /v1/responses`), OpenAI Chat Completions
(`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`) on 127.0.0.1. Both
SDKs send HTTP through their own stack, so a real server is the only seam that sees what they
send and parses what they receive. Each request takes the next reply from its endpoint's queue,
then from the shared queue, then from the responder; with none left the server answers a loud,
non-retryable 500 so a test never passes on a reply it did not script. A request the real API
would refuse gets its 400 instead, in that API's error shape. How each API is spoken (bodies,
streams, errors, what it refuses) is in its own module, behind `FakeApi`; a `ServerProfile`
makes its Chat Completions answer as an OpenAI-compatible server does (llama-cpp-python's,
llama.cpp's llama-server) instead of as OpenAI.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from promptkit.errors import ArgumentTypeError, ArgumentValueError, InvalidStateError
from promptkit.logging import get_logger
from promptkit.testing._chat import FakeChatCompletions
from promptkit.testing._fake_api import FakeApi, WireRenderError
from promptkit.testing._messages import FakeMessages
from promptkit.testing._profile import ServerProfile
from promptkit.testing._replies import Reply
from promptkit.testing._responses import FakeResponses
from promptkit.testing._stream_faults import stream_body
from promptkit.wire import Endpoint

_log = get_logger("promptkit.testing")

_APIS: dict[Endpoint, FakeApi] = {
    api.format.endpoint: api for api in (FakeResponses(), FakeChatCompletions(), FakeMessages())
}
_ENDPOINTS: tuple[Endpoint, ...] = tuple(_APIS)
_PATHS: dict[str, Endpoint] = {api.format.path: endpoint for endpoint, api in _APIS.items()}
# A path the fake does not serve is answered as OpenAI would (the error shape, the request id).
_OTHER_PATHS = _APIS["responses"]
_CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})
_MASK = "***"

Responder = Callable[["RecordedRequest"], Reply]
"""Computes the reply to a request when no scripted reply is queued for it."""


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _credential_value(name: str, value: str) -> str:
    # "Bearer sk-..." carries the key after the scheme; x-api-key carries it bare.
    _scheme, _, token = value.partition(" ")
    if name in ("authorization", "proxy-authorization") and token:
        return token.strip()
    return value.strip()


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it.

    Credential headers (`authorization`, `x-api-key`, `api-key`) are masked in `headers`; the
    record keeps only a SHA-256 digest of each credential, so printing a record or a failing
    assertion never shows a key, while `sent_api_key` can still tell whether a key was sent.
    """

    index: int
    method: str
    path: str
    endpoint: Endpoint | None
    headers: Mapping[str, str]
    raw_body: bytes
    request_id: str
    credential_digests: frozenset[str] = field(default=frozenset(), repr=False)

    @property
    def body(self) -> dict[str, Any]:
        """The JSON object the client sent: a fresh copy per call, or {} if it sent no object
        (the server answered such a request with a 400)."""
        try:
            value = json.loads(self.raw_body)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def tool_results(self) -> dict[str, str]:
        """The text of each tool result the request sends back, by the id of the call it
        answers, whichever wire API it speaks."""
        return _api_of(self).tool_results(self.body)

    @property
    def has_credentials(self) -> bool:
        """Whether the request carried any credential header."""
        return bool(self.credential_digests)

    def sent_api_key(self, api_key: str) -> bool:
        """Whether `api_key` was the credential of this request."""
        expected = _digest(api_key)
        return any(hmac.compare_digest(expected, seen) for seen in self.credential_digests)


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    # A faulty stream (`StreamBody`): a longer length promised than sent, or an endless tail.
    promised: int | None = None
    repeated: bytes = b""


class FakeProviderServer:
    """A scripted OpenAI/Anthropic-compatible HTTP server on 127.0.0.1 and an ephemeral port.

    Use it as a context manager, or call `start()` and `stop()`. Point `openai.OpenAI(base_url=
    server.openai_base_url)` or `anthropic.Anthropic(base_url=server.anthropic_base_url)` at it,
    script replies with `enqueue`, and inspect `requests` afterwards. `profile` (default
    OpenAI's) is the server its Chat Completions behave like, for example
    `ServerProfile.llama_cpp_python()`.
    """

    def __init__(self, *, profile: ServerProfile | None = None) -> None:
        if profile is not None and not isinstance(profile, ServerProfile):
            raise ArgumentTypeError(
                f"FakeProviderServer(profile=...) takes a ServerProfile, got"
                f" {type(profile).__name__}"
            )
        # OpenAI's own profile changes nothing, so it is not applied at all.
        self._profile = None if profile is None or profile == ServerProfile() else profile
        # A server with one slot answers one request at a time: the next one waits.
        self._slot = threading.Lock()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._shared: deque[Reply] = deque()
        self._by_endpoint: dict[Endpoint, deque[Reply]] = {e: deque() for e in _ENDPOINTS}
        self._responder: Responder | None = None
        self._records: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def profile(self) -> ServerProfile:
        """The server the Chat Completions endpoint behaves like."""
        return self._profile or ServerProfile()

    # Lifecycle ---------------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind an ephemeral port on 127.0.0.1 and start serving in a background thread."""
        if self._httpd is not None or self._stopping.is_set():
            raise InvalidStateError(
                "FakeProviderServer.start(): this server was already started; "
                "create a new FakeProviderServer for each test"
            )
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        # A short poll interval keeps stop() fast; serve_forever checks for shutdown this often.
        thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"FakeProviderServer-{httpd.server_address[1]}",
            daemon=True,
        )
        self._httpd, self._thread = httpd, thread
        thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and delayed replies, and join every thread.

        Safe to call twice. A request still waiting on a delayed reply gets no answer.
        """
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None or self._stopping.is_set():
            return
        # Set before the connection snapshot below: a handler that registers after the
        # snapshot sees it and closes its own connection (see _track).
        self._stopping.set()
        httpd.shutdown()
        thread.join()
        with self._lock:
            open_connections = list(self._connections)
        for connection in open_connections:
            # Idle keep-alive handlers block reading the next request; a shutdown wakes them.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # Addresses ---------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`; the server must be running."""
        httpd = self._httpd
        if httpd is None or self._stopping.is_set():
            raise InvalidStateError(
                "FakeProviderServer is not running: use `with FakeProviderServer() as server:` "
                "or call start() before reading its URL"
            )
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        """The `base_url` for `openai.OpenAI` / `openai.AsyncOpenAI` (ends in `/v1`)."""
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The `base_url` for `anthropic.Anthropic` / `anthropic.AsyncAnthropic`."""
        return self.base_url

    # Script ------------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply, endpoint: Endpoint | None = None) -> None:
        """Queue replies, answered in order.

        Without `endpoint` they go to the shared queue, which any endpoint draws from; with one,
        only requests to that endpoint (`"responses"`, `"chat_completions"`, `"messages"`) take
        them, and they are taken before the shared queue. Every retry an SDK makes takes the
        next reply.
        """
        if endpoint is not None and endpoint not in _ENDPOINTS:
            raise ArgumentValueError(
                f"FakeProviderServer.enqueue: unknown endpoint {endpoint!r}; "
                f"expected one of {', '.join(_ENDPOINTS)} or None for the shared queue"
            )
        for reply in replies:
            if not isinstance(reply, Reply):
                raise ArgumentTypeError(
                    f"FakeProviderServer.enqueue takes Reply values (Reply.text(...), "
                    f"Reply.error(...), ...), got {type(reply).__name__}"
                )
        with self._lock:
            queue = self._shared if endpoint is None else self._by_endpoint[endpoint]
            queue.extend(replies)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer requests that find every queue empty with `responder(request)`.

        For concurrent tests, where the order requests arrive in is not fixed: the reply can
        depend on what the request asks. It runs on a server thread; if it raises, the client
        gets a non-retryable 500 naming the exception. None removes it.
        """
        with self._lock:
            self._responder = responder

    @property
    def pending_count(self) -> int:
        """How many queued replies no request has taken yet."""
        with self._lock:
            return len(self._shared) + sum(len(q) for q in self._by_endpoint.values())

    # Record ------------------------------------------------------------------------------------

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request received so far, in arrival order (including retries)."""
        with self._lock:
            return tuple(self._records)

    @property
    def request_count(self) -> int:
        """How many requests the server has received."""
        with self._lock:
            return len(self._records)

    # Server side -------------------------------------------------------------------------------

    def _track(self, connection: socket.socket) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self._connections.add(connection)
            return True

    def _untrack(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)

    def _record(
        self, method: str, target: str, header_items: Iterable[tuple[str, str]], raw_body: bytes
    ) -> RecordedRequest:
        path = urlsplit(target).path
        endpoint = _PATHS.get(path.rstrip("/"))
        headers: dict[str, str] = {}
        digests: set[str] = set()
        for raw_name, value in header_items:
            name = raw_name.lower()
            if name in _CREDENTIAL_HEADERS:
                digests.add(_digest(_credential_value(name, value)))
                scheme, _, token = value.partition(" ")
                value = f"{scheme} {_MASK}" if name == "authorization" and token else _MASK
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        with self._lock:
            index = len(self._records)
            record = RecordedRequest(
                index=index,
                method=method,
                path=path,
                endpoint=endpoint,
                headers=MappingProxyType(headers),
                raw_body=raw_body,
                request_id=f"req_fake{index + 1:06d}",
                credential_digests=frozenset(digests),
            )
            self._records.append(record)
        return record

    def _answer(
        self, method: str, target: str, header_items: Iterable[tuple[str, str]], raw_body: bytes
    ) -> _Answer | None:
        """The HTTP answer to one request, or None when the server stopped meanwhile."""
        record = self._record(method, target, header_items, raw_body)
        endpoint = record.endpoint
        where = f"{method} {record.path}"
        if endpoint is None:
            return self._problem(
                record,
                404,
                f"FakeProviderServer serves POST /v1/responses, /v1/chat/completions and "
                f"/v1/messages, not {where}: check the client's base_url "
                f"(openai_base_url ends in /v1, anthropic_base_url does not)",
            )
        if method != "POST":
            return self._problem(record, 405, f"FakeProviderServer: {where} must be a POST")
        try:
            request = json.loads(raw_body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            return self._problem(
                record, 400, f"FakeProviderServer: the body of {where} is not a JSON object"
            )
        api = _APIS[endpoint]
        problems = api.problems(request)
        if problems:
            # What the real API answers: a 400 in its own error shape, taking no scripted reply.
            body = api.error_body(
                400,
                f"FakeProviderServer refused {where} as the real API would: {problems[0]}",
                error_type=None,
                request_id=record.request_id,
            )
            return _json_answer(400, body, record, ())
        profile = self._profile if endpoint == "chat_completions" else None
        if profile is None:
            return self._scripted(record, api, request, None)
        refused = profile.refusal(request)
        if refused is not None:
            status, message = refused
            body = api.error_body(status, message, error_type=None, request_id=record.request_id)
            return _json_answer(status, profile.error_body(status, body), record, ())
        if not profile.single_slot:
            return self._scripted(record, api, request, profile)
        with self._slot:
            return self._scripted(record, api, request, profile)

    # Each kind of reply, and what is wrong with the script, is a path here: one each.
    def _scripted(  # noqa: C901, PLR0912
        self,
        record: RecordedRequest,
        api: FakeApi,
        request: dict[str, Any],
        profile: ServerProfile | None,
    ) -> _Answer | None:
        """The answer from the script (queues, then the responder) to a request it may take."""
        endpoint = record.endpoint
        assert endpoint is not None  # `_answer` served the unknown paths
        where = f"{record.method} {record.path}"
        reply, responder = self._take_reply(endpoint)
        if reply is None and responder is not None:
            try:
                reply = responder(record)
            except Exception as exc:
                return self._problem(
                    record,
                    500,
                    f"FakeProviderServer: the responder raised {type(exc).__name__}: {exc} "
                    f"while answering request #{record.index + 1} ({where})",
                )
            if not isinstance(reply, Reply):
                return self._problem(
                    record,
                    500,
                    f"FakeProviderServer: the responder returned {type(reply).__name__}, "
                    "not a Reply",
                )
        if reply is None:
            return self._problem(
                record,
                500,
                f"FakeProviderServer: the reply script ran out at request #{record.index + 1} "
                f"({where}); enqueue a Reply for every call the code under test makes "
                "(SDK retries included)",
            )

        if reply.delay_seconds and self._stopping.wait(reply.delay_seconds):
            return None
        if reply.kind == "raw":
            headers = (
                ("content-type", reply.content_type),
                (api.format.request_id_header, record.request_id),
            )
            return _Answer(status=reply.status, headers=headers, body=reply.raw_body)
        if reply.kind == "error":
            body = api.error_body(
                reply.status,
                reply.error_message,
                error_type=reply.error_type,
                request_id=record.request_id,
            )
            if profile is not None:
                body = profile.error_body(reply.status, body)
            return _json_answer(reply.status, body, record, reply.headers)
        if profile is not None:
            reply = profile.reply_to(reply, request)
        try:
            body = api.body(reply, request, record.index + 1)
        except WireRenderError as exc:
            return self._problem(record, 500, f"FakeProviderServer: {exc}")
        if profile is not None:
            body = profile.body(body)
        if request.get("stream") is True:
            events = api.events(body, request)
            if profile is not None:
                events = profile.stream(events)
            stream = stream_body(api, list(events), reply.stream_fault)
            headers = (
                ("content-type", "text/event-stream"),
                (api.format.request_id_header, record.request_id),
            )
            return _Answer(200, headers, stream.sent, stream.promised, stream.repeated)
        return _json_answer(200, body, record, ())

    def _take_reply(self, endpoint: Endpoint) -> tuple[Reply | None, Responder | None]:
        with self._lock:
            for queue in (self._by_endpoint[endpoint], self._shared):
                if queue:
                    return queue.popleft(), None
            return None, self._responder

    def _problem(self, record: RecordedRequest, status: int, message: str) -> _Answer:
        # A mistake in the test's script is not transient: x-should-retry stops both SDKs from
        # retrying it, so the test fails at once with this message.
        body = _api_of(record).error_body(
            status, message, error_type=None, request_id=record.request_id
        )
        return _json_answer(status, body, record, (("x-should-retry", "false"),))


def _json_answer(
    status: int,
    body: dict[str, Any],
    record: RecordedRequest,
    extra_headers: tuple[tuple[str, str], ...],
) -> _Answer:
    payload = json.dumps(body).encode("utf-8")
    headers = (
        ("content-type", "application/json"),
        (_api_of(record).format.request_id_header, record.request_id),
        *extra_headers,
    )
    return _Answer(status=status, headers=headers, body=payload)


def _api_of(record: RecordedRequest) -> FakeApi:
    return _OTHER_PATHS if record.endpoint is None else _APIS[record.endpoint]


class _HTTPServer(ThreadingHTTPServer):
    # Handler threads are joined by server_close() so stop() leaves no thread behind.
    daemon_threads = False
    block_on_close = True
    # Twenty concurrent clients connect at once; the default backlog of 5 would make some of
    # them wait for a SYN retransmit.
    request_queue_size = 128
    owner: FakeProviderServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        # A client that timed out or was closed hangs up mid-answer; that is expected.
        if isinstance(error, ConnectionError | TimeoutError):
            return
        _log.error("fake_provider_handler_failed", client=str(client_address), exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, the body of every
    # keep-alive answer after the first waits out the client's delayed ACK (about 40 ms).
    disable_nagle_algorithm = True
    server: _HTTPServer

    def handle(self) -> None:
        owner = self.server.owner
        if not owner._track(self.connection):
            return
        try:
            super().handle()
        finally:
            owner._untrack(self.connection)

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        # The request record replaces an access log; stderr output would clutter test runs.
        return

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw_body = self.rfile.read(length) if length > 0 else b""
        answer = self.server.owner._answer(self.command, self.path, self.headers.items(), raw_body)
        if answer is None:
            self.close_connection = True
            return
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        if answer.repeated:
            # No length: the body ends when the connection does, which the client ends.
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(answer.body)
            self._send_until_hung_up(answer.repeated)
            self.close_connection = True
            return
        self.send_header("content-length", str(answer.promised or len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)
        if answer.promised is not None:
            self.close_connection = True  # fewer bytes than promised: the connection drops

    def _send_until_hung_up(self, chunk: bytes) -> None:
        stopping = self.server.owner._stopping
        # A short pause per write keeps an endless stream from taking a core from the tests.
        while not stopping.wait(0.001):
            self.wfile.write(chunk)
