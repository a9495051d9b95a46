"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Replies come from a queue of scripted `Reply` objects (first in, first out), then from a
``responder(request) -> Reply`` function; every request is recorded. A reply can carry an
HTTP status, headers (e.g. Retry-After), a raw body, and a delay before it is sent (to
hit a client's timeout).

    with FakeOpenAIServer() as server:
        server.push(Reply.error(429, retry_after=1), Reply("hello"))
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        assert len(server.requests) == 2
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: The API key tests send the fake server: it must never show in logs, errors or results.
TEST_API_KEY = "sk-test-SECRET-7f3a9c0e5b1d4a2f"


@dataclass
class Reply:
    """One scripted answer: an assistant message, or an error status with a body."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: Any = None  # a raw JSON-serialisable body or a string, instead of a completion

    @classmethod
    def error(
        cls, status: int, message: str = "scripted error", retry_after: float | None = None
    ) -> Reply:
        """An error reply in the OpenAI error format, with an optional Retry-After header."""
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        body = {"error": {"message": message, "type": "server_error", "code": status}}
        return cls(status=status, headers=headers, body=body)


@dataclass
class Request:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    json: Any
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a chat-completions request."""
        return self.json.get("messages", []) if isinstance(self.json, dict) else []

    def message(self, role: str) -> str:
        """The content of the last message with ``role``."""
        return next(m["content"] for m in reversed(self.messages) if m.get("role") == role)


def completion_body(content: str | None, model: str) -> dict[str, Any]:
    """A minimal chat.completion response object holding ``content``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FakeOpenAIServer:
    """The server; start with ``with`` or `start`, and it stops on exit or `stop`."""

    def __init__(self, responder: Callable[[Request], Reply] | None = None) -> None:
        self.responder = responder
        self.requests: list[Request] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---

    def push(self, *replies: Reply) -> None:
        """Queue replies; each is used by exactly one request, in order."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        """Forget the recorded requests and the queued replies."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()

    @property
    def request_count(self) -> int:
        """Number of requests received so far."""
        with self._lock:
            return len(self.requests)

    def _next_reply(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is None:
            return Reply.error(500, "no scripted reply left")
        return self.responder(request)

    # --- lifecycle ---

    @property
    def base_url(self) -> str:
        """The ``base_url`` for an OpenAI client."""
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAIServer:
        """Listen on a free port of 127.0.0.1 in a background thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    payload = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    payload = raw.decode("utf-8", "replace")
                request = Request(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    payload,
                    time.monotonic(),
                )
                reply = server._next_reply(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.body is not None:
                    body = reply.body
                else:
                    model = payload.get("model", "") if isinstance(payload, dict) else ""
                    body = completion_body(reply.content, model)
                data = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to answer

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
