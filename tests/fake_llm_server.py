"""A local HTTP server that speaks the Anthropic Messages and OpenAI Chat Completions wire
formats, with scripted answers, so that tests drive the real `anthropic` and `openai` SDK
clients (pointed at it with base_url) without a network or a key.

A test gives the server a responder: a function from the `Call` it received to what it
does about it, one of `Answer` (a completion with exact usage figures), `Fail` (an HTTP
error, e.g. 429 with retry-after, or 500), `Hang` (hold the connection and never answer)
and `Malformed` (a 200 whose body is not what the API sends). `Answer` takes canonical
figures and renders each API's own usage block from them, the way each provider counts:
Anthropic's input_tokens exclude cache reads and writes, OpenAI's prompt_tokens include
them and its completion_tokens include reasoning.

An `Answer` may also call tools (`ToolCall`): rendered as Anthropic `tool_use` content
blocks (stop_reason tool_use) or OpenAI `tool_calls` with JSON-text arguments
(finish_reason tool_calls). `Call.tool_results` reads the results a client sent back, in
either format, so a scripted agent can react to what its tools said.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call in an Answer: the tool's name and its arguments."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A completion, and the tokens the server says it used (canonical buckets)."""

    text: str
    tools: tuple[ToolCall, ...] = ()  # tool calls after the text
    input: int = 100  # input tokens that were neither read from nor written to the cache
    output: int = 50  # all generated tokens, reasoning included
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    stop: str = "end"  # end | max_tokens
    raw_usage: dict[str, Any] | None = None  # sent as is instead of the rendered block


@dataclass(frozen=True)
class Fail:
    """An HTTP error status, optionally with a retry-after header (seconds)."""

    status: int
    retry_after: str | None = None
    message: str = "scripted failure"


@dataclass(frozen=True)
class Hang:
    """Read the request, then hold the connection without answering for `seconds`."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Malformed:
    """A 200 response with this body (invalid JSON, or JSON the API would never send)."""

    body: str


Turn = Answer | Fail | Hang | Malformed


@dataclass
class Call:
    """One completion request the server received."""

    api: str  # anthropic | openai
    body: dict[str, Any]
    headers: dict[str, str]
    occurrence: int  # how many times this exact body was received before
    turn: Turn | None = None  # what the responder did with it

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def prompt(self) -> str:
        """All the text of the request: system prompt and every message."""
        parts = [self.body.get("system") or ""]
        parts += [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in self.messages]
        return "\n".join(parts)

    @property
    def exchange(self) -> int:
        """1 for the first model call of a conversation, 2 after one reply, ... (both APIs)."""
        return 1 + sum(1 for m in self.messages if m["role"] == "assistant")

    @property
    def tools(self) -> list[str]:
        """Names of the tools the request offers."""
        return [t.get("name") or t["function"]["name"] for t in self.body.get("tools") or []]

    @property
    def tool_results(self) -> list[str]:
        """The contents of the tool results sent after the last assistant message."""
        results: list[str] = []
        for m in reversed(self.messages):
            if m["role"] == "assistant":
                break
            if m["role"] == "tool":
                results.insert(0, m["content"])
            elif m["role"] == "user" and isinstance(m["content"], list):
                blocks = [b for b in m["content"] if b.get("type") == "tool_result"]
                results[:0] = [b["content"] if isinstance(b["content"], str) else json.dumps(b["content"]) for b in blocks]
        return results

    @property
    def temperature(self) -> float | None:
        return self.body.get("temperature")

    @property
    def user_turn(self) -> int:
        """1 for the first user message, 2 after one exchange, ..."""
        return sum(1 for m in self.messages if m["role"] == "user")

    @property
    def answered(self) -> bool:
        return isinstance(self.turn, Answer)


class Queue:
    """A responder that plays turns in order, then repeats the last one."""

    def __init__(self, turns: Iterable[Turn]):
        self.turns = list(turns)
        self._lock = threading.Lock()

    def __call__(self, call: Call) -> Turn:
        with self._lock:
            return self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]


def anthropic_body(call: Call, a: Answer, n: int) -> dict[str, Any]:
    usage = a.raw_usage if a.raw_usage is not None else {
        "input_tokens": a.input,
        "cache_creation_input_tokens": a.cache_write,
        "cache_read_input_tokens": a.cache_read,
        "output_tokens": a.output,
        "output_tokens_details": {"thinking_tokens": a.reasoning},
        "service_tier": "standard",
    }
    content: list[dict[str, Any]] = [{"type": "text", "text": a.text}] if a.text or not a.tools else []
    content += [{"type": "tool_use", "id": f"toolu_{n:04d}_{i}", "name": t.name, "input": t.input} for i, t in enumerate(a.tools)]
    return {
        "id": f"msg_{n:06d}", "type": "message", "role": "assistant", "model": call.body.get("model"),
        "content": content,
        "stop_reason": "max_tokens" if a.stop == "max_tokens" else "tool_use" if a.tools else "end_turn",
        "stop_sequence": None, "usage": usage,
    }


def openai_body(call: Call, a: Answer, n: int) -> dict[str, Any]:
    prompt = a.input + a.cache_read + a.cache_write
    usage = a.raw_usage if a.raw_usage is not None else {
        "prompt_tokens": prompt,
        "completion_tokens": a.output,
        "total_tokens": prompt + a.output,
        "prompt_tokens_details": {"cached_tokens": a.cache_read, "cache_write_tokens": a.cache_write},
        "completion_tokens_details": {"reasoning_tokens": a.reasoning},
    }
    return {
        "id": f"chatcmpl-{n:06d}", "object": "chat.completion", "created": int(time.time()),
        "model": call.body.get("model"),
        "choices": [{
            "index": 0, "message": {"role": "assistant", "content": a.text or None, **({"tool_calls": [
                {"id": f"call_{n:04d}_{i}", "type": "function", "function": {"name": t.name, "arguments": json.dumps(t.input)}}
                for i, t in enumerate(a.tools)]} if a.tools else {})},
            "finish_reason": "length" if a.stop == "max_tokens" else "tool_calls" if a.tools else "stop",
        }],
        "usage": usage,
    }


def error_body(api: str, status: int, message: str) -> dict[str, Any]:
    if api == "anthropic":
        kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "server_error" if status >= 500 else "invalid_request_error", "code": None}}


@dataclass
class FakeLLMServer:
    """`with FakeLLMServer(responder) as server:` serves on 127.0.0.1 at a free port."""

    responder: Callable[[Call], Turn]
    models: tuple[str, ...] = ("fake-model",)
    api_key: str | None = None  # when set, any other key gets a 401, as the real APIs answer
    calls: list[Call] = field(default_factory=list)
    model_listings: int = 0  # GET /v1/models requests
    lists_models: bool = True  # false: GET /v1/models is a 404, as on endpoints that do not list theirs
    hanging: threading.Event = field(default_factory=threading.Event)  # set while a Hang is held

    def __post_init__(self) -> None:
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True

    @property
    def url(self) -> str:
        """The Anthropic SDK's base_url (it appends /v1/messages)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def openai_url(self) -> str:
        """The OpenAI SDK's base_url (it appends /chat/completions)."""
        return f"{self.url}/v1"

    @property
    def answered(self) -> list[Call]:
        return [c for c in self.calls if c.answered]

    def __enter__(self) -> FakeLLMServer:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _receive(self, api: str, body: dict[str, Any], headers: dict[str, str]) -> Call:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self._lock:
            call = Call(api, body, headers, self._seen[digest])
            self._seen[digest] += 1
            self.calls.append(call)
        call.turn = self.responder(call)
        return call

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _refused(self, api: str) -> bool:
                """Check the key where each SDK sends it: x-api-key, or a bearer token."""
                if server.api_key is None:
                    return False
                sent = self.headers.get("x-api-key") or self.headers.get("authorization", "").removeprefix("Bearer ")
                if sent == server.api_key:
                    return False
                self._send(401, json.dumps(error_body(api, 401, f"invalid x-api-key {sent}")))
                return True

            def do_GET(self) -> None:
                api = "anthropic" if "anthropic-version" in {k.lower() for k in self.headers} else "openai"
                if self._refused(api):
                    return
                if not self.path.startswith("/v1/models") or not server.lists_models:
                    return self._send(404, json.dumps({"error": {"message": "not found"}}))
                server.model_listings += 1
                if api == "anthropic":
                    data = [{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"} for m in server.models]
                    body = {"data": data, "has_more": False, "first_id": server.models[0], "last_id": server.models[-1]}
                else:
                    body = {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server.models]}
                self._send(200, json.dumps(body))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") == "/v1/messages":
                    api = "anthropic"
                elif self.path.rstrip("/") == "/v1/chat/completions":
                    api = "openai"
                else:
                    return self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                if self._refused(api):
                    return
                call = server._receive(api, body, dict(self.headers))
                turn = call.turn
                if isinstance(turn, Hang):
                    server.hanging.set()
                    server._release.wait(turn.seconds)
                    self.close_connection = True
                    return
                if isinstance(turn, Fail):
                    headers = {"retry-after": turn.retry_after} if turn.retry_after else {}
                    return self._send(turn.status, json.dumps(error_body(api, turn.status, turn.message)), headers)
                if isinstance(turn, Malformed):
                    return self._send(200, turn.body)
                n = len(server.calls)
                render = anthropic_body if api == "anthropic" else openai_body
                self._send(200, json.dumps(render(call, turn, n)))

        return Handler
