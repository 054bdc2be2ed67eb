#!/usr/bin/env python3
"""A fake `claude` and a fake `opencode` for tests: small but real coding-agent CLIs.

Installed on PATH under either name (tests/test_agent_cli.py writes a two-line `claude`
and `opencode` that run this file with the name as first argument), it behaves as that
CLI does headless, as far as kgb can see: it reads its endpoint and key where the real one
does (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY; OPENCODE_CONFIG's provider), makes real
streamed HTTP model calls (Anthropic Messages for claude, Chat Completions for opencode) to
that endpoint, runs the tool calls of each reply in its working directory (a shell, read,
write, edit), and writes its event stream in the real CLI's format, which was taken from
the real CLIs (Claude Code 2.1, OpenCode 1.18) run through kgb's proxy:

- claude: stream-json; one `assistant` event per content block, each repeating the
  message's id and usage (the duplicates a reader must fold); `user` events with tool
  results; a last `result` with the summed usage, or is_error after an API error.
- opencode: `--format json`; a title call first (a model call its stream never reports),
  then per model call step_start, text, one tool_use per call once run, step_finish
  with the tokens; an `error` event after an API error.

Like the real ones it keeps its session files under its HOME (so a test can see they stay
in the trial's directory), and claude refuses to overwrite a file it has not read. Like
the real claude it names its working directory in its system prompt, and its tools' results
name files by their absolute paths.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

SCHEMA = {"type": "object"}


def post(url: str, headers: dict[str, str], body: dict[str, Any]) -> list[dict[str, Any]]:
    """One streamed call: the `data:` objects of its server-sent events."""
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **headers})
    out = []
    with urllib.request.urlopen(request, timeout=600) as response:
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("data:") and line[5:].strip() != "[DONE]":
                out.append(json.loads(line[5:]))
    return out


class Tools:
    """The file and shell tools, in the working directory."""

    def __init__(self, names: dict[str, str]):
        self.names = names  # the CLI's tool name -> bash | read | write | edit
        self.read: set[Path] = set()
        self.strict_writes = False  # claude: a file that exists must be read before it is written

    def run(self, name: str, args: dict[str, Any]) -> tuple[str, bool, int | None]:
        kind = self.names.get(name)
        path = Path(args.get("file_path") or args.get("filePath") or ".").resolve()
        if kind == "bash":
            done = subprocess.run(["bash", "-c", args["command"]], capture_output=True, text=True)
            return done.stdout + done.stderr, done.returncode != 0, done.returncode
        if kind == "read":
            self.read.add(path)
            return path.read_text(), False, None
        if kind == "write":
            if self.strict_writes and path.exists() and path not in self.read:
                return "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", True, None
            path.write_text(args["content"])
            return f"File created successfully at: {path}", False, None
        if kind == "edit":
            text = path.read_text()
            old = args.get("old_string", args.get("oldString", ""))
            if text.count(old) != 1:
                return "<tool_use_error>String to replace not found in file.</tool_use_error>", True, None
            path.write_text(text.replace(old, args.get("new_string", args.get("newString", ""))))
            return f"The file {path} has been updated.", False, None
        return f"<tool_use_error>No such tool available: {name}</tool_use_error>", True, None


def emit(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


def claude(argv: list[str]) -> int:
    opt = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    names = {"Bash": "bash", "Read": "read", "Write": "write", "Edit": "edit"}
    offered = [t for t in opt.get("--tools", "").split(",") if t in names]
    schema = {"Bash": ["command"], "Read": ["file_path"], "Write": ["file_path", "content"],
              "Edit": ["file_path", "old_string", "new_string"]}
    tools = Tools(names)
    tools.strict_writes = True
    session = str(uuid.uuid4())
    store = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / os.getcwd().replace("/", "-")
    store.mkdir(parents=True, exist_ok=True)
    transcript = (store / f"{session}.jsonl").open("a")
    model = opt["--model"]
    emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": session, "tools": offered,
          "mcp_servers": [], "model": model, "permissionMode": opt.get("--permission-mode"),
          "apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "0.0.0-fake", "uuid": str(uuid.uuid4())})
    messages: list[dict[str, Any]] = [{"role": "user", "content": sys.stdin.read()}]
    total = {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0}
    turns, last, started = 0, "", time.time()
    while True:
        body = {"model": model, "max_tokens": 32000, "stream": True, "messages": messages,
                "system": [{"type": "text", "text": f"You are a fake Claude Code.\nWorking directory: {os.getcwd()}\n"
                            f"Today's date: {datetime.date.today().isoformat()}\n"
                            + opt.get("--append-system-prompt", "")}],
                "tools": [{"name": t, "description": f"the {t} tool",
                           "input_schema": {"type": "object", "properties": {a: {"type": "string"} for a in schema[t]},
                                            "required": schema[t]}} for t in offered]}
        try:
            events = post(f"{os.environ['ANTHROPIC_BASE_URL']}/v1/messages",
                          {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}, body)
        except urllib.error.HTTPError as e:
            emit({"type": "result", "subtype": "success", "is_error": True, "duration_ms": int((time.time() - started) * 1000),
                  "num_turns": turns, "result": f"API Error: {e.code} {e.read().decode()}", "session_id": session,
                  "total_cost_usd": 0, "usage": total})
            return 1
        turns += 1
        message: dict[str, Any] = {}
        blocks: list[dict[str, Any]] = []
        for e in events:
            if e["type"] == "message_start":
                message = e["message"]
            elif e["type"] == "content_block_start":
                blocks.append(dict(e["content_block"]))
            elif e["type"] == "content_block_delta":
                d, b = e["delta"], blocks[e["index"]]
                if d["type"] == "text_delta":
                    b["text"] += d["text"]
                else:
                    b["partial"] = b.get("partial", "") + d["partial_json"]
            elif e["type"] == "message_delta":
                message["usage"] = {**message["usage"], **e["usage"]}
        for b in blocks:
            if b["type"] == "tool_use":
                b["input"] = json.loads(b.pop("partial", "") or "{}")
        for k in total:
            total[k] += int(message["usage"].get(k) or 0)
        for b in blocks:  # one event per block, each with the message's id and usage
            emit({"type": "assistant", "message": {**message, "content": [b], "stop_reason": None},
                  "parent_tool_use_id": None, "session_id": session, "uuid": str(uuid.uuid4())})
        transcript.write(json.dumps({"type": "assistant", "message": {**message, "content": blocks}}) + "\n")
        messages.append({"role": "assistant", "content": blocks})
        last = "".join(b.get("text", "") for b in blocks)
        uses = [b for b in blocks if b["type"] == "tool_use"]
        if not uses:
            break
        results = []
        for u in sorted(uses, key=lambda u: names.get(u["name"]) != "read"):  # reads first, as one reply may read then write
            text, failed, code = tools.run(u["name"], u["input"])
            if failed and code is not None:
                text = f"Exit code {code}\n{text}"
            results.append({"type": "tool_result", "content": text, "is_error": failed, "tool_use_id": u["id"]})
        emit({"type": "user", "message": {"role": "user", "content": results}, "parent_tool_use_id": None,
              "session_id": session, "uuid": str(uuid.uuid4())})
        messages.append({"role": "user", "content": results})
    emit({"type": "result", "subtype": "success", "is_error": False, "duration_ms": int((time.time() - started) * 1000),
          "num_turns": turns, "result": last, "stop_reason": "end_turn", "session_id": session,
          "total_cost_usd": 0.0, "usage": total})
    return 0


def opencode(argv: list[str]) -> int:
    config = json.loads(Path(os.environ["OPENCODE_CONFIG"]).read_text())
    provider_name, model = config["model"].split("/", 1)
    options = config["provider"][provider_name]["options"]
    url, key = options["baseURL"].rstrip("/") + "/chat/completions", options["apiKey"]
    system = "You are a fake OpenCode.\n" + "\n".join(Path(p).read_text() for p in config.get("instructions", []))
    names = {"bash": "bash", "read": "read", "write": "write", "edit": "edit"}
    schema = {"bash": ["command", "description"], "read": ["filePath"], "write": ["filePath", "content"],
              "edit": ["filePath", "oldString", "newString"]}
    tools = Tools(names)
    session = "ses_" + uuid.uuid4().hex[:26]
    store = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "opencode" / "storage" / "session"
    store.mkdir(parents=True, exist_ok=True)
    prompt = argv[-1]
    head = {"authorization": f"Bearer {key}"}

    def stamp(kind: str, **rest: Any) -> dict[str, Any]:
        return {"type": kind, "timestamp": int(time.time() * 1000), "sessionID": session, **rest}

    def call(messages: list[dict[str, Any]], offer: bool) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
        body = {"model": model, "stream": True, "stream_options": {"include_usage": True}, "messages": messages}
        if offer:
            body["tools"] = [{"type": "function", "function": {
                "name": t, "description": f"the {t} tool",
                "parameters": {"type": "object", "properties": {a: {"type": "string"} for a in args}, "required": args}}}
                for t, args in schema.items()]
        text, calls, usage = "", {}, {}
        for chunk in post(url, head, body):
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                text += delta.get("content") or ""
                for c in delta.get("tool_calls") or []:
                    slot = calls.setdefault(c["index"], {"id": "", "name": "", "arguments": ""})
                    slot["id"] = c.get("id") or slot["id"]
                    slot["name"] += (c.get("function") or {}).get("name") or ""
                    slot["arguments"] += (c.get("function") or {}).get("arguments") or ""
        return text, [calls[i] for i in sorted(calls)], usage

    try:
        title, _, _ = call([{"role": "system", "content": "Generate a short title."}, {"role": "user", "content": prompt[:500]}], False)
        (store / f"{session}.json").write_text(json.dumps({"id": session, "title": title, "directory": os.getcwd()}))
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        while True:
            message_id = "msg_" + uuid.uuid4().hex[:26]
            emit(stamp("step_start", part={"id": "prt_" + uuid.uuid4().hex[:26], "messageID": message_id,
                                          "sessionID": session, "type": "step-start"}))
            text, calls, usage = call(messages, True)
            if text:
                emit(stamp("text", part={"id": "prt_" + uuid.uuid4().hex[:26], "messageID": message_id, "sessionID": session,
                                         "type": "text", "text": text}))
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls]} if calls else {})})
            for c in calls:
                args = json.loads(c["arguments"] or "{}")
                output, failed, code = tools.run(c["name"], args)
                status = "error" if failed and code is None else "completed"
                state = {"status": status, "input": args, **({"error": output} if status == "error" else
                                                           {"output": output, "metadata": {"output": output, "exit": code}})}
                emit(stamp("tool_use", part={"type": "tool", "tool": c["name"], "callID": c["id"], "state": state}))
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": output})
            cached = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
            reasoning = ((usage.get("completion_tokens_details") or {}).get("reasoning_tokens")) or 0
            tokens = {"input": usage["prompt_tokens"] - cached, "output": usage["completion_tokens"] - reasoning,
                      "reasoning": reasoning, "cache": {"read": cached, "write": 0}}
            emit(stamp("step_finish", part={"id": "prt_" + uuid.uuid4().hex[:26], "messageID": message_id,
                                           "sessionID": session, "type": "step-finish",
                                           "reason": "tool-calls" if calls else "stop", "tokens": tokens, "cost": 0}))
            if not calls:
                return 0
    except urllib.error.HTTPError as e:
        emit(stamp("error", error={"name": "APIError", "data": {"message": e.read().decode(), "statusCode": e.code}}))
        return 1


if __name__ == "__main__":
    name, args = sys.argv[1], sys.argv[2:]
    if "--version" in args:
        print(f"0.0.0-fake ({name})")
        sys.exit(0)
    sys.exit(claude(args) if name == "claude" else opencode(args[1:]))
