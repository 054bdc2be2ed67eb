"""The check tool: kgb's judge on the cases an agent may see, as a record the harness keeps.

Every check of a new source proposes it as a candidate (CandidateProposed, linked to the
tool call that asked) and judges it on the visible cases (CandidateChecked); a source
checked before in the attempt gets its earlier check back. The harness
knows the agent's best candidate from these events, never from what the agent says. An
agent reaches the checker in two ways: the loop driver's `check` tool calls it directly,
and the workspace's `./check` command (kgb/agents/check.py) asks the `CheckServer`, a
Unix socket in the trial's directory that only answers requests carrying the trial's
ticket. Whatever a process prints, the record is what the harness judged itself.

The visible cases are the job's cases less those tagged `check` (on a GPU: smoke and
bench); the final verdict uses every case of the job. On the CPU the job judges smoke
cases only, so there the two sets are the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import secrets
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgb.agents import socket_address
from kgb.agents.nofollow import KERNEL_BYTES, read_text
from kgb.evaluate import EvalSettings, JudgeKilled, Status, Verdict, evaluate
from kgb.operators import CaseTag
from kgb.tracking.events import CandidateChecked, CandidateProposed
from kgb.trial import InfrastructureFailure, TrialContext

ERROR_TAIL = 2000
# A check request is one line: the ticket and a path (./check sends some 200 bytes). A longer
# one is refused, read no further: an endless line once took the harness to 3 GB (session
# 45's red team). And one client at a time is served: one that sends nothing is let go.
REQUEST_MAX_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Checked:
    """One check: the candidate, its source and its verdict on the visible cases."""

    candidate: str
    source: str
    verdict: Verdict
    call_id: str
    tests_total: int

    @property
    def tests_passed(self) -> int:
        return sum(1 for c in self.verdict.cases if c.status == Status.CORRECT)

    def report(self, note: str = "") -> dict[str, object]:
        """The check's result as the agent sees it (stable keys)."""
        v = self.verdict
        error = "" if v.correct else (v.message + ("\n" + v.logs.strip()[-ERROR_TAIL:] if v.logs.strip() else ""))
        return {
            "candidate": self.candidate,
            "status": v.status.value,
            "compiled": v.status not in (Status.REJECTED, Status.COMPILE_ERROR),
            "correct": v.correct,
            "tests": f"{self.tests_passed}/{self.tests_total}",
            "speedup": v.speedup,
            "kernel_us": v.latency_us,
            "baseline_us": v.baseline_us,
            "baseline": v.baseline,
            "error": _scrub(error),
            "note": note,
        }


def _scrub(text: str) -> str:
    """The judge's temporary paths out of error text, so that equal failures read alike."""
    import re

    return re.sub(r"\S*kgb-eval-[^/\s]*/", "", text)


def visible_settings(settings: EvalSettings) -> EvalSettings:
    tags = tuple(t for t in settings.case_tags if t != CaseTag.CHECK.value) or settings.case_tags
    return dataclasses.replace(settings, case_tags=tags)


class Checker:
    """Judges sources on the visible cases and keeps every check of the trial."""

    def __init__(self, ctx: TrialContext, on_check: Callable[[Checked], str] | None = None):
        self.ctx = ctx
        self.settings = visible_settings(ctx.settings)
        self.tests_total = len(ctx.spec.cases_for({CaseTag(t) for t in self.settings.case_tags}))
        self.checks: list[Checked] = []
        self.on_check = on_check  # a method's step after each check (log a row, restore the best)
        # held through a judgement: best() waits for a ./check still judging (its command
        # killed at the wall clock) so that the final kernel does not depend on the race
        self._lock = threading.RLock()

    def check(self, source: str, call_id: str, origin: str) -> tuple[Checked, str]:
        """Judge `source`; return the check and the method's note on it. A source this
        attempt checked before is not judged again: its check is returned under this call."""
        with self._lock:
            before = self._checked_before(source)
            if before is not None:
                checked = dataclasses.replace(before, call_id=call_id)
                self.checks.append(checked)
                note = self.on_check(checked) if self.on_check else ""
                again = f"the same source as {before.candidate}, checked before: its verdict, not judged again"
                return checked, f"{again}; {note}" if note else again
            ctx = self.ctx
            ctx.proposed += 1
            candidate = f"c{ctx.proposed}-{hashlib.sha256(source.encode()).hexdigest()[:8]}"
            earlier = [e for e in ctx.prior if isinstance(e, CandidateChecked) and e.candidate == candidate]
            if earlier:  # a resumed trial asks again what an earlier attempt checked: not judged twice
                logs = ctx.blobs.get(earlier[0].logs_blob) if earlier[0].logs_blob else ""
                verdict = dataclasses.replace(earlier[0].verdict, logs=logs)
            else:
                # an attempt cut short between the two (Ctrl-C, a kill, the judge's failure below)
                # proposed it already: the log holds each candidate once, as ctx.evaluate keeps it
                if not any(isinstance(e, CandidateProposed) and e.candidate == candidate for e in ctx.prior):
                    ctx.emit(CandidateProposed(job=ctx.job, candidate=candidate, source_blob=ctx.blobs.put(source),
                                               origin=origin, produced_by=call_id))
                verdict = self._judge(source)
                ctx.emit(CandidateChecked(
                    job=ctx.job, candidate=candidate, verdict=dataclasses.replace(verdict, logs=""),
                    logs_blob=ctx.blobs.put(verdict.logs) if verdict.logs else None, call_id=call_id,
                ))
            checked = Checked(candidate, source, verdict, call_id, self.tests_total)
            self.checks.append(checked)
            note = self.on_check(checked) if self.on_check else ""
            return checked, note

    def _checked_before(self, source: str) -> Checked | None:
        """The check of this very source earlier in the attempt, but for a timeout (the judge
        may have been slow). Judging it again cost a judge call, ~20 s of a GPU, for nothing
        new: iterative's and autokernel's harness checked after each session the kernel the
        agent had just checked. And each judgement's timing is a fresh draw of the GPU's noise,
        so an agent that checked one kernel ten times kept the fastest of ten timings as its
        best, and autokernel could keep an experiment that changed nothing as a gain."""
        return next((c for c in reversed(self.checks)
                     if c.source == source and c.verdict.status != Status.TIMEOUT), None)

    def _judge(self, source: str) -> Verdict:
        """The judge's verdict on the visible cases, or InfrastructureFailure where the machine,
        not the candidate, failed (its judge killed from outside, its engine gone), as
        TrialContext._judge says it for the final kernel: until session 50 such a failure in a
        check ended the trial as method_error, counted against the method and never retried.
        The agent's ./check and check tool tell it to check again; a harness check between
        sessions ends the trial as infra_error, which the next run retries."""
        try:
            return evaluate(source, self.ctx.spec, self.settings)
        except JudgeKilled as e:
            raise InfrastructureFailure(str(e)) from e
        except Exception as e:  # noqa: BLE001 - evaluate never raises for a faulty candidate
            raise InfrastructureFailure(f"the judge could not run: {type(e).__name__}: {e}") from e

    def best(self) -> Checked | None:
        """The best correct check: fastest, the latest of equals; None if none is correct.
        A check still being judged (./check in another thread) is waited for."""
        with self._lock:
            correct = [c for c in self.checks if c.verdict.correct]
        if not correct:
            return None
        return max(reversed(correct), key=lambda c: c.verdict.speedup or 0.0)


class CheckServer:
    """Answers `./check` in the workspace: reads the named file itself and judges it.

    `current_call` names the tool call whose command is running, so that a check made
    through a command is linked to that call."""

    def __init__(self, checker: Checker, socket_path: Path, resolve: Callable[[str], Path]):
        self.checker, self.resolve = checker, resolve
        self.ticket = secrets.token_hex(16)
        self.current_call = ""
        self.refusal: Callable[[], str | None] = lambda: None  # a budget's reason to refuse a check
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    line = request_line(self.request)
                    if line is None:
                        answer = {"ok": False, "error": f"a check request is one line of at most "
                                                         f"{REQUEST_MAX_BYTES} bytes: this one is longer"}
                    else:
                        request = json.loads(line or b"{}")
                        answer = server.answer(request if isinstance(request, dict) else {})
                except (ValueError, OSError) as e:
                    answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
                with contextlib.suppress(OSError):  # a client gone, or one that reads nothing
                    self.request.settimeout(REQUEST_TIMEOUT_S)
                    self.request.sendall((json.dumps(answer) + "\n").encode())

        with socket_address.address(str(socket_path)) as where:  # made at the path itself, whatever its length
            self._server = socketserver.UnixStreamServer(where, Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def answer(self, request: dict[str, object]) -> dict[str, object]:
        if not hmac.compare_digest(str(request.get("ticket", "")), self.ticket):
            return {"ok": False, "error": "this check request does not come from this trial's workspace"}
        if reason := self.refusal():
            return {"ok": False, "error": reason}
        path = self.resolve(str(request.get("file") or "kernel.py"))
        source = read_text(path, max_bytes=KERNEL_BYTES)
        if source is None:
            return {"ok": False, "error": f"{request.get('file')}: no such file in the workspace"}
        try:
            checked, note = self.checker.check(source, self.current_call or "command",
                                               origin=f"check of {path.name}")
        except InfrastructureFailure as e:  # the machine's failure: no verdict on the agent's kernel
            return {"ok": False, "error": f"{e}; no verdict on this kernel: check it again"}
        return {"ok": True, "report": checked.report(note)}

    def __enter__(self) -> CheckServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def request_line(conn: socket.socket) -> bytes | None:
    """The first line a client sends (its newline included; all it sent if it ends the
    connection first), read within REQUEST_TIMEOUT_S in all (TimeoutError past it); None
    for a line longer than REQUEST_MAX_BYTES, read no further."""
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    line = b""
    while b"\n" not in line and len(line) <= REQUEST_MAX_BYTES:
        try:
            conn.settimeout(max(deadline - time.monotonic(), 1e-3))
            data = conn.recv(REQUEST_MAX_BYTES + 1 - len(line))
        except TimeoutError:
            raise TimeoutError(f"no check request within {REQUEST_TIMEOUT_S:g} s") from None
        if not data:
            break
        line += data
    line = line[:line.find(b"\n") + 1] if b"\n" in line else line
    return line if len(line) <= REQUEST_MAX_BYTES else None
