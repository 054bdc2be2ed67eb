"""`agent.driver=claude` and `agent.driver=opencode`: a coding-agent CLI runs the session.

The CLI is started in the workspace, in its own process group, inside the agent's shell
sandbox (kgb/agents/commands.py: the trial's folder the only writable place, TCP to the
proxy's port only), with the workspace's built-up environment (its HOME, no key of the
harness) plus what it needs to reach kgb's model proxy (kgb/models/proxy.py). Every model call it makes goes through that proxy into
`ctx.model`, so it is a ModelCalled and a TurnTaken like a call of the loop driver, and the
harness counts turns, tokens and cost itself; the real key never leaves kgb. The check
tool is the workspace's `./check`, which reaches the harness's check server; a check is
linked to the tool call of the model's last reply that ran it.

A watchdog ends the CLI (SIGKILL to its process group) at the first budget reached (wall
clock, turns, tokens, cost, checks), at the session's turn limit, or when the method's
protocol says stop; the workspace as the CLI left it is then salvaged by the harness.
The CLI's stream gives the tool calls (ToolCalled, with their results as the CLI showed
them) and the CLI's own token report, which is kept beside kgb's count in
SessionFinished.cli_report_blob and never charged.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING

from kgb.agents import claude_cli, opencode_cli
from kgb.agents.commands import confined
from kgb.agents.nofollow import open_nofollow
from kgb.agents.reaper import stop
from kgb.agents.stream import CliRecord
from kgb.evaluate import disk_bound
from kgb.models import ModelCallFailed, ProviderUnavailable
from kgb.models.proxy import Answer, Conversation, ModelProxy, Refused
from kgb.tracking.events import SessionEnd, ToolCalled, TurnTaken
from kgb.trial import BudgetExhausted
from kgb.usage import Usage

if TYPE_CHECKING:
    from kgb.agents.harness import AgentRun
    from kgb.agents.loop import SessionOutcome

CLIS: dict[str, ModuleType] = {"claude": claude_cli, "opencode": opencode_cli}
NPM_PREFIX = Path(os.environ.get("KGB_NPM_PREFIX", "~/.cache/kgb/npm")).expanduser()
INSTALL = "npm install --prefix {prefix} @anthropic-ai/claude-code opencode-ai"
POLL_S = 0.05
STDERR_TAIL = 2000
# What the harness holds of a CLI's stream (session 47's red team: a command wrote a line of 256 MB
# with no end into it, and the harness held 1.9 GB): a line past LINE_MAX_BYTES is skipped whole
# (counted), and of the lines read at most STREAM_KEEP_BYTES are kept for the stream's blob (the
# rest parsed, counted, not kept). Far above what a CLI writes: an event holds a file it wrote
# (a kernel, at most 1 MB) or a command's output, which the real CLIs cut at some 30,000 characters.
LINE_MAX_BYTES = 16 << 20
STREAM_KEEP_BYTES = 64 << 20


def find_cli(driver: str) -> str:
    """The CLI's executable: on PATH, else in the npm prefix kgb installs it into."""
    found = shutil.which(driver) or shutil.which(driver, path=str(NPM_PREFIX / "node_modules" / ".bin"))
    if found is None:
        raise ValueError(f"method.agent.driver={driver}: no `{driver}` on PATH or under {NPM_PREFIX}; install it with "
                         f"`{INSTALL.format(prefix=NPM_PREFIX)}` (or set KGB_NPM_PREFIX)")
    return found


def install_dir(executable: str) -> str:
    """What the sandboxed CLI may read and execute: the node_modules it was installed into
    (the package and its native binaries), else the folder of its executable."""
    real = Path(executable).resolve()
    for parent in real.parents:
        if parent.name == "node_modules":
            return str(parent)
    return str(real.parent)


def cli_version(executable: str) -> str:
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=60,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"})
        return done.stdout.strip() or done.stderr.strip()[:200]
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown ({e})"


def difference(after: Usage, before: Usage) -> Usage:
    return Usage(after.input_tokens - before.input_tokens, after.output_tokens - before.output_tokens,
                 after.cache_read_tokens - before.cache_read_tokens, after.cache_write_tokens - before.cache_write_tokens,
                 after.reasoning_tokens - before.reasoning_tokens, after.cost_usd - before.cost_usd)


def bounded_lines(stream: IO[bytes], record: CliRecord) -> Iterator[str]:
    """The lines of a CLI's stream as text, each of at most LINE_MAX_BYTES (a longer one is
    skipped whole, counted in `record.overlong`); the first STREAM_KEEP_BYTES of them are kept
    in `record.lines`, the rest counted in `record.cut`."""
    kept = 0
    while True:
        raw = stream.readline(LINE_MAX_BYTES + 1)
        if not raw:
            return
        if len(raw) > LINE_MAX_BYTES and not raw.endswith(b"\n"):
            record.overlong += 1
            while (rest := stream.readline(LINE_MAX_BYTES)) and not rest.endswith(b"\n"):
                pass  # its rest, read and dropped
            continue
        line = raw.decode(errors="replace")
        if kept + len(raw) <= STREAM_KEEP_BYTES:
            record.lines.append(line)
            kept += len(raw)
        else:
            record.cut += 1
        yield line


def stderr_tail(fd: int, chars: int) -> str:
    """The last `chars` characters of the file `fd` (of its last 4 bytes a character), read
    from its end: the CLI's stderr file lies in the trial folder, and a command that made it a
    sparse file of gigabytes had the harness read all of it (session 47's red team)."""
    size = os.fstat(fd).st_size
    start = max(0, size - 4 * chars)
    return os.pread(fd, size - start, start).decode(errors="replace")[-chars:]


@dataclass
class Stop:
    """Why the watchdog ended the CLI (the first reason wins)."""

    end: SessionEnd | None = None
    reason: str = ""
    outage: ProviderUnavailable | None = None  # the provider down: the session's outcome carries it (SessionOutcome)

    def set(self, end: SessionEnd, reason: str, outage: ProviderUnavailable | None = None) -> None:
        if self.end is None:
            self.end, self.reason, self.outage = end, reason, outage


class CliSession:
    """One session of a CLI driver; `run_cli()` runs it and returns its outcome."""

    def __init__(self, run: AgentRun, session: int, prompt: str, system: str, tools: bool, max_turns: int):
        self.run, self.session, self.prompt, self.system = run, session, prompt, system
        self.tools, self.max_turns = tools, max_turns
        self.cli = CLIS[run.cfg.agent.driver]
        self.turns = 0  # model calls of the session, side calls included
        self.conversation_turns = 0  # those the session's turn limit counts
        # OpenCode offers its tools in every call of a session, answer mode included (there
        # the proxy drops them); Claude Code offers what --tools gives it
        self.cli_offers_tools = tools or self.cli is opencode_cli
        self.stop = Stop()
        self.record = CliRecord()
        self.counted = Usage()

    # --- the proxy's side: each model call of the CLI ---

    def answer(self, conversation: Conversation) -> Answer:
        run, ctx = self.run, self.run.ctx
        if self.stop.end is not None:
            raise Refused(f"the session is over: {self.stop.reason}")
        if reason := run.budget.exhausted(ctx.model.used):
            self.stop.set(SessionEnd.BUDGET, reason)
            raise Refused(reason)
        # a call without tools from a CLI that offers them is a side call (OpenCode's title):
        # paid and logged like any, but not a turn of the session's conversation
        side_call = self.cli_offers_tools and not conversation.tools
        if not side_call and self.conversation_turns >= self.max_turns:
            self.stop.set(SessionEnd.TURNS, f"the session's limit of {self.max_turns} turn(s)")
            raise Refused(self.stop.reason)
        before = ctx.model.used
        try:
            completion = ctx.model.complete(conversation.messages, system=conversation.system,
                                            temperature=run.cfg.temperature,
                                            tools=conversation.tools if self.tools else (),
                                            deadline=run.budget.call_deadline)
        except BudgetExhausted as e:
            run.budget.reached = run.budget.reached or str(e)
            self.stop.set(SessionEnd.BUDGET, str(e))
            raise Refused(str(e)) from e
        except ModelCallFailed as e:
            self.stop.set(SessionEnd.ERROR, str(e), e if isinstance(e, ProviderUnavailable) else None)
            raise Refused(str(e)) from e
        usage = difference(ctx.model.used, before)
        self.counted += usage
        self.turns += 1
        self.conversation_turns += not side_call
        run.budget.turns += 1
        run.replies.append(completion.text)
        uses = completion.tool_uses if self.tools else ()
        ctx.emit(TurnTaken(job=ctx.job, session=self.session, turn=self.turns, request_hash=completion.request_hash,
                           tool_calls=len(uses)))
        # the tools of this reply run next: a ./check among them is linked to the call that ran it
        checking = [u for u in uses if "check" in json.dumps(u.input)] or list(uses)
        run.server.current_call = checking[0].id if checking else ""
        return Answer(completion.text, uses, completion.stop_reason, usage)

    # --- the CLI's side: its process and its stream ---

    def read(self, stdout: IO[bytes]) -> None:
        ctx = self.run.ctx
        for raw in bounded_lines(stdout, self.record):
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                self.record.unreadable += 1
                continue
            for item in self.cli.parse(event) if isinstance(event, dict) else ():
                ended = self.record.take(item)
                if ended is not None:
                    started, result, duration = ended
                    ctx.emit(ToolCalled(
                        job=ctx.job, session=self.session, turn=self.turns, call_id=started.id, tool=started.name,
                        input_blob=ctx.blobs.put(json.dumps(started.input, sort_keys=True)),
                        result_blob=ctx.blobs.put(result.output), is_error=result.is_error, duration_s=duration,
                    ))

    def watch(self, proc: subprocess.Popen[str]) -> None:
        """Until the CLI exits: end it at a budget, the turn limit or the protocol's stop."""
        run = self.run
        while proc.poll() is None:
            over = run.budget.exhausted(run.ctx.model.used)
            done = None if over else run.stop_reason()
            if over:
                self.stop.set(SessionEnd.BUDGET, over)
            elif done:
                self.stop.set(SessionEnd.STOPPED, done)
            # a failed model call is the CLI's to report: it ends on its own (the proxy
            # refuses it any further call), within the wall clock
            if over or done or self.stop.end in (SessionEnd.BUDGET, SessionEnd.TURNS):
                stop(proc)
                break
            time.sleep(POLL_S)
        proc.wait()

    def start(self, executable: str, proxy: ModelProxy) -> subprocess.Popen[str]:
        ws, model = self.run.workspace, self.run.ctx.model.model.defaults.model
        env = ws.env(self.run.server.ticket)
        if self.cli is claude_cli:
            env |= claude_cli.environment(ws.home, proxy.url, proxy.token, model)
            argv, stdin = claude_cli.command(executable, model, self.system, self.tools), self.prompt
        else:
            env |= opencode_cli.environment(ws.home, proxy.url, proxy.token, model, self.system)
            argv, stdin = [*opencode_cli.command(executable, model), self.prompt], ""
        # the CLI runs in the agent's shell sandbox: its trial folder writable, TCP to the proxy only
        argv, env = confined(argv, ws.trial_dir, env, tcp_port=proxy.port, exec_dirs=(install_dir(executable),))
        # in the trial folder, which the agent's commands may write: read back by its tail (stderr_tail)
        self.stderr = open(open_nofollow(ws.trial_dir / f"cli-{self.session}.stderr", os.O_RDWR | os.O_CREAT | os.O_TRUNC),
                           "w+b")
        # The stream comes over a socket, not a pipe: a pipe of the CLI's is reopened by any of its
        # commands through /proc/<cli>/fd/1 (the sandbox lets a command read its own PID namespace's
        # /proc, and Landlock does not govern pipes), and what a command wrote there was logged as
        # the CLI's tool calls (session 47's red team); a socket cannot be opened through /proc.
        ours, theirs = socket.socketpair()
        try:
            proc = subprocess.Popen(argv, cwd=ws.root, env=env, stdin=subprocess.PIPE, stdout=theirs.fileno(),
                                    stderr=self.stderr, text=True, process_group=0)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.stdout = ours.makefile("rb")
        ours.close()  # the file holds the socket
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        return proc

    def run_cli(self) -> SessionOutcome:
        from kgb.agents.loop import SessionOutcome

        run = self.run
        executable = find_cli(run.cfg.agent.driver)
        version = cli_version(executable)
        # the CLI and every command it runs share the trial folder's disk bound, as a command the
        # harness runs has it alone (kgb.evaluate.disk_bound): past it the session ends
        disk = disk_bound.Watch(run.workspace.trial_dir, disk_bound.COMMAND_DISK_BYTES)
        with ModelProxy(self.answer, run.ctx.model.model.defaults.model) as proxy:
            proc = self.start(executable, proxy)
            reader = threading.Thread(target=self.read, args=(self.stdout,), daemon=True)
            reader.start()
            try:
                disk.start(lambda: stop(proc))
                self.watch(proc)
            finally:
                stop(proc)  # the CLI, and what it left running
                proc.wait()
                if note := disk.finish():  # once nothing of the CLI's runs: what it wrote past the bound, taken back
                    self.stop.set(SessionEnd.ERROR, note)
                reader.join(timeout=10)
                if not reader.is_alive():
                    self.stdout.close()
                run.server.current_call = ""
        stderr = stderr_tail(self.stderr.fileno(), STDERR_TAIL)
        self.stderr.close()
        stream = run.ctx.blobs.put("".join(self.record.lines))
        report = self.record.report(self.counted, self.cli.NAME, version, stream)
        self.report_blob = run.ctx.blobs.put(report)
        if self.stop.end is not None:
            return SessionOutcome(self.stop.end, self.stop.reason, self.turns, self.stop.outage)
        if proc.returncode != 0 or self.record.error:
            why = self.record.error or f"exit status {proc.returncode}"
            return SessionOutcome(SessionEnd.ERROR, f"{self.cli.NAME} failed: {why}" + (f"\n{stderr}" if stderr else ""),
                                  self.turns)
        return SessionOutcome(SessionEnd.DONE, f"{self.cli.NAME} ended on its own", self.turns)
