"""A local model endpoint for coding-agent CLIs, answered through kgb's own Model wrapper.

A CLI (Claude Code, OpenCode) is pointed at `ModelProxy.url` instead of the real API. The
proxy speaks the Anthropic Messages and the OpenAI Chat Completions wire formats, plain or
streamed (server-sent events), on 127.0.0.1 at a random port. Each request is read into
kgb's provider-neutral form (system, messages of blocks, tools) and handed to `answer`,
which calls the model through `ctx.model` like every other method: the real endpoint,
the key, retries, usage, price, budgets and replay stay in kgb, and every call is a
ModelCalled event. The reply is rendered back in the wire format the CLI asked in, with
the usage kgb counted, so that the CLI's own report can be compared with kgb's.

What the neutral form cannot carry is dropped: thinking blocks, cache-control marks,
images (a placeholder text), and the CLI's own max_tokens and temperature (the method's
and the model config's apply). The CLI authenticates with a per-trial token, never the
real key: a process that reads the CLI's environment can reach only this proxy.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kgb.models.content import Block, Text, Tool, ToolResult, ToolUse, arguments
from kgb.models.model import Message, StopReason
from kgb.usage import Usage

ANTHROPIC_STOP = {StopReason.END: "end_turn", StopReason.MAX_TOKENS: "max_tokens", StopReason.REFUSAL: "refusal",
                  StopReason.TOOL_USE: "tool_use", StopReason.OTHER: "end_turn"}
OPENAI_STOP = {StopReason.END: "stop", StopReason.MAX_TOKENS: "length", StopReason.REFUSAL: "content_filter",
               StopReason.TOOL_USE: "tool_calls", StopReason.OTHER: "stop"}


@dataclass(frozen=True)
class Conversation:
    """One request of a CLI, provider-neutral."""

    wire: str  # anthropic | openai: the format the CLI spoke
    system: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]
    model: str  # the model the CLI named (the proxy answers with the configured one)


@dataclass(frozen=True)
class Answer:
    """What the model replied and the tokens kgb counted for it."""

    text: str
    tool_uses: tuple[ToolUse, ...]
    stop_reason: StopReason
    usage: Usage


class Refused(Exception):
    """The call is not made (a budget is spent, the model failed for good): the CLI gets
    an error status it does not retry."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message, self.status = message, status


# --- requests: wire -> neutral ---


def _merged(messages: list[tuple[str, list[Block]]]) -> tuple[Message, ...]:
    """Consecutive messages of one role as one (the APIs alternate roles); a lone text as a string."""
    out: list[tuple[str, list[Block]]] = []
    for role, blocks in messages:
        if out and out[-1][0] == role:
            out[-1][1].extend(blocks)
        else:
            out.append((role, list(blocks)))
    result = []
    for role, blocks in out:
        if not blocks:
            blocks = [Text("(empty)")]
        only_text = len(blocks) == 1 and isinstance(blocks[0], Text)
        result.append(Message(role, blocks[0].text if only_text else tuple(blocks)))  # type: ignore[union-attr]
    return tuple(result)


def _text_of(content: Any) -> str:
    """A tool result's or a message's content as text: a string, or text parts joined."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        kind = part.get("type")
        if kind == "text":
            parts.append(part.get("text", ""))
        elif kind in ("image", "image_url", "document"):
            parts.append(f"[{kind} omitted by kgb's proxy]")
    return "\n".join(parts)


def read_anthropic(body: dict[str, Any]) -> Conversation:
    system = body.get("system") or ""
    messages: list[tuple[str, list[Block]]] = []
    for m in body.get("messages", []):
        content = m.get("content")
        blocks: list[Block] = []
        for b in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            kind = b.get("type")
            if kind == "text" and b.get("text"):
                blocks.append(Text(b["text"]))
            elif kind == "tool_use":
                blocks.append(ToolUse(b["id"], b["name"], b.get("input") or {}))
            elif kind == "tool_result":
                blocks.append(ToolResult(b["tool_use_id"], _text_of(b.get("content")), bool(b.get("is_error"))))
            elif kind in ("image", "document"):
                blocks.append(Text(f"[{kind} omitted by kgb's proxy]"))
            # thinking and redacted_thinking blocks are the model's own and not sent back
        messages.append((m["role"], blocks))
    tools = tuple(Tool(t["name"], t.get("description", ""), t["input_schema"])
                  for t in body.get("tools") or [] if "input_schema" in t)  # server tools have none
    return Conversation("anthropic", _text_of(system), _merged(messages), tools, str(body.get("model", "")))


def read_openai(body: dict[str, Any]) -> Conversation:
    system: list[str] = []
    messages: list[tuple[str, list[Block]]] = []
    for m in body.get("messages", []):
        role = m.get("role")
        if role in ("system", "developer"):
            system.append(_text_of(m.get("content")))
        elif role == "tool":
            messages.append(("user", [ToolResult(m["tool_call_id"], _text_of(m.get("content")))]))
        elif role == "assistant":
            text = _text_of(m.get("content"))
            blocks: list[Block] = [Text(text)] if text else []
            blocks += [ToolUse(c["id"], c["function"]["name"], arguments(c["function"].get("arguments")))
                       for c in m.get("tool_calls") or []]
            messages.append(("assistant", blocks))
        else:
            text = _text_of(m.get("content"))
            messages.append(("user", [Text(text)] if text else []))
    tools = tuple(Tool(f["name"], f.get("description", ""), f.get("parameters") or {"type": "object", "properties": {}})
                  for t in body.get("tools") or [] if (f := t.get("function")))
    return Conversation("openai", "\n\n".join(s for s in system if s), _merged(messages), tools, str(body.get("model", "")))


# --- replies: neutral -> wire ---


def anthropic_usage(u: Usage) -> dict[str, int]:
    return {"input_tokens": u.input_tokens, "cache_creation_input_tokens": u.cache_write_tokens,
            "cache_read_input_tokens": u.cache_read_tokens, "output_tokens": u.output_tokens}


def openai_usage(u: Usage) -> dict[str, Any]:
    prompt = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
    return {"prompt_tokens": prompt, "completion_tokens": u.output_tokens, "total_tokens": prompt + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens}}


def anthropic_message(a: Answer, model: str, n: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": a.text}] if a.text or not a.tool_uses else []
    content += [{"type": "tool_use", "id": u.id, "name": u.name, "input": u.input} for u in a.tool_uses]
    return {"id": f"msg_kgb_{n:06d}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": ANTHROPIC_STOP[a.stop_reason], "stop_sequence": None, "usage": anthropic_usage(a.usage)}


def anthropic_events(a: Answer, model: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    """The Messages API's stream of one reply: start, each block (start, delta, stop), the end."""
    message = anthropic_message(a, model, n)
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 0}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": opened}),
                   ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": i})]
    events += [("message_delta", {"type": "message_delta", "usage": message["usage"],
                                  "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}),
               ("message_stop", {"type": "message_stop"})]
    return events


def openai_message(a: Answer) -> dict[str, Any]:
    calls = [{"id": u.id, "type": "function", "function": {"name": u.name, "arguments": json.dumps(u.input)}}
             for u in a.tool_uses]
    return {"role": "assistant", "content": a.text or None, **({"tool_calls": calls} if calls else {})}


def openai_completion(a: Answer, model: str, n: int) -> dict[str, Any]:
    return {"id": f"chatcmpl-kgb-{n:06d}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": openai_message(a), "finish_reason": OPENAI_STOP[a.stop_reason]}],
            "usage": openai_usage(a.usage)}


def openai_chunks(a: Answer, model: str, n: int) -> list[dict[str, Any]]:
    """Chat Completions' stream of one reply: the text, each tool call, the finish, the usage."""
    head = {"id": f"chatcmpl-kgb-{n:06d}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": a.text or ""})]
    chunks += [chunk({"tool_calls": [{"index": i, **call}]}) for i, call in enumerate(openai_message(a).get("tool_calls", []))]
    chunks.append(chunk({}, OPENAI_STOP[a.stop_reason]))
    chunks.append({**head, "choices": [], "usage": openai_usage(a.usage)})
    return chunks


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    if wire == "anthropic":
        kind = "authentication_error" if status == 401 else "invalid_request_error" if status < 500 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error", "code": None}}


# The largest request the proxy reads: a CLI's whole conversation, its tool results included,
# is a few MB at a model's longest context
MAX_REQUEST_BYTES = 64 << 20
# A connection silent this long (a kept-alive one between the agent's turns, or one that never
# sends) is closed; a CLI opens another. Past the longest a command may run (command_timeout_s).
CONNECTION_IDLE_S = 900.0


class ModelProxy:
    """`with ModelProxy(answer, model) as proxy:` serves at `proxy.url`; `proxy.token` is the
    only key it accepts. `answer` is called for one request at a time, in arrival order."""

    def __init__(self, answer: Callable[[Conversation], Answer], model: str):
        self.answer, self.model = answer, model
        self.token = "kgb-proxy-" + secrets.token_hex(16)
        self.calls = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ModelProxy:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:  # a call still under way (its CLI killed) is logged before the session ends
            pass

    def respond(self, conversation: Conversation) -> tuple[Answer, int]:
        with self._lock:  # one call at a time: the trial's turns and budgets are counted in order
            self.calls += 1
            return self.answer(conversation), self.calls

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # a connection that sends nothing this long is let go: each holds a thread
            timeout = CONNECTION_IDLE_S

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the events are the log
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, events: list[str]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for e in events:
                    self.wfile.write(e.encode())
                    self.wfile.flush()
                self.close_connection = True

            def _authorised(self, wire: str) -> bool:
                sent = self.headers.get("x-api-key") or self.headers.get("authorization", "").removeprefix("Bearer ")
                if hmac.compare_digest(sent.encode(), proxy.token.encode()):
                    return True
                self._send(401, error_body(wire, 401, "not this trial's key"))
                return False

            def do_GET(self) -> None:
                wire = "anthropic" if "anthropic-version" in {k.lower() for k in self.headers} else "openai"
                if not self._authorised(wire):
                    return
                if self.path.split("?")[0].rstrip("/") not in ("/v1/models", "/models"):
                    return self._send(404, error_body(wire, 404, f"no route {self.path}"))
                self._send(200, {"object": "list", "data": [{"id": proxy.model, "object": "model", "type": "model",
                                                             "display_name": proxy.model, "owned_by": "kgb"}]})

            def do_POST(self) -> None:
                route = self.path.split("?")[0].rstrip("/")
                if route == "/v1/messages":
                    wire, read = "anthropic", read_anthropic
                elif route in ("/v1/chat/completions", "/chat/completions"):
                    wire, read = "openai", read_openai
                else:  # count_tokens and the like: the CLIs do without
                    self.close_connection = True  # its body unread
                    return self._send(404, error_body("anthropic" if "messages" in route else "openai", 404,
                                                      f"no route {self.path}"))
                # The key and the length before the body: the proxy's port is the one an agent's
                # commands may reach, and a body read first, of whatever length a request
                # claimed, held the harness's memory for anyone (session 47's red team).
                if not self._authorised(wire):
                    self.close_connection = True
                    return
                try:
                    length = int(self.headers.get("content-length", 0))
                except ValueError:
                    length = -1
                if not 0 <= length <= MAX_REQUEST_BYTES:
                    self.close_connection = True
                    return self._send(413, error_body(wire, 413, f"a request of {self.headers.get('content-length')} "
                                                                 f"bytes: kgb's proxy takes up to {MAX_REQUEST_BYTES}"))
                body = json.loads(self.rfile.read(length) or b"{}")
                try:
                    answer, n = proxy.respond(read(body))
                except Refused as e:
                    return self._send(e.status, error_body(wire, e.status, e.message))
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    return self._send(400, error_body(wire, 400, f"kgb's proxy cannot read this request: {e!r}"))
                stream = bool(body.get("stream"))
                if wire == "anthropic" and stream:
                    self._stream([f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in anthropic_events(answer, proxy.model, n)])
                elif wire == "anthropic":
                    self._send(200, anthropic_message(answer, proxy.model, n))
                elif stream:
                    self._stream([f"data: {json.dumps(c)}\n\n" for c in openai_chunks(answer, proxy.model, n)] + ["data: [DONE]\n\n"])
                else:
                    self._send(200, openai_completion(answer, proxy.model, n))

        return Handler
