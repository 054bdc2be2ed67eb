"""The shared Model wrapper: everything about a model call except the wire format.

A provider (anthropic.py, openai.py, replay.py) has one method that turns a `Request` into
a `Reply` or raises `CallFailed` (failures.py, which also says which failures are retried).
This wrapper adds, once for all of them: retries with backoff (a retry-after wait wins),
budgets, cost, and the `ModelCalled` event of every call. A trial uses it through
`for_trial(ctx)`, which also answers, on a resumed trial, every request the trial's log
already holds.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from kgb.config import LLMConfig, PriceConfig
from kgb.models.content import Block, Tool, ToolUse, tool_uses_from_json, tool_uses_json
from kgb.models.failures import CallFailed, ModelCallFailed, ProviderUnavailable, WallClockReached
from kgb.tracking.events import ModelCalled
from kgb.tracking.log import read_events
from kgb.tracking.projections import REPLAYED
from kgb.trial import BudgetExhausted
from kgb.usage import Usage

if TYPE_CHECKING:
    from kgb.trial import TrialContext


class StopReason(StrEnum):
    """Why generation stopped, in one vocabulary across providers."""

    END = "end"  # the model finished (Anthropic end_turn/stop_sequence, OpenAI stop)
    MAX_TOKENS = "max_tokens"  # cut at max_tokens (Anthropic max_tokens, OpenAI length)
    REFUSAL = "refusal"  # refused or filtered (Anthropic refusal, OpenAI content_filter)
    TOOL_USE = "tool_use"  # the model called tools and waits for their results
    OTHER = "other"


@dataclass(frozen=True)
class Message:
    """One turn of a conversation."""

    role: str  # user | assistant
    content: str | tuple[Block, ...]  # text, or blocks: text, tool calls, tool results


@dataclass(frozen=True)
class Request:
    """What is sent, provider-neutral. Its JSON text is logged and hashed; no secrets."""

    model: str
    system: str
    messages: tuple[Message, ...]
    temperature: float | None  # None: none is sent
    max_tokens: int
    tools: tuple[Tool, ...] = ()  # tools the model may call

    def text(self) -> str:
        body = asdict(self)
        if not self.tools:  # so that requests without tools hash as they did before tools existed
            del body["tools"]
        return json.dumps(body, indent=1, sort_keys=True)

    @property
    def hash(self) -> str:
        """Equal to the hash of the request blob, so resumes and replays match on it."""
        return hashlib.sha256(self.text().encode()).hexdigest()


@dataclass(frozen=True)
class CallSite:
    """Where a call comes from; only replay needs it, to find the recorded answer."""

    op: str
    sample: int
    occurrence: int  # how many times this trial sent the same request before
    index: int  # calls this trial made before this one


@dataclass(frozen=True)
class Reply:
    """A provider's answer: the text, why it stopped, and tokens (canonical and as sent)."""

    text: str
    stop_reason: StopReason
    usage: Usage  # canonical buckets, cost not yet set
    raw_usage: dict[str, Any]
    tool_uses: tuple[ToolUse, ...] = ()  # the tools the model called, in order


@dataclass(frozen=True)
class Completion:
    """What a method gets back from `ctx.model.complete(...)`."""

    text: str
    stop_reason: StopReason
    request_hash: str
    tool_uses: tuple[ToolUse, ...] = ()

    @property
    def truncated(self) -> bool:
        return self.stop_reason == StopReason.MAX_TOKENS


class Provider(Protocol):
    name: str

    def complete(self, request: Request, site: CallSite, timeout_s: float | None = None) -> Reply:
        """One attempt; `timeout_s` bounds it where the caller has a deadline sooner than the
        configured model.timeout_s."""
        ...

    def models(self) -> list[str] | None:
        """The model ids the endpoint serves, or None where it cannot list them."""
        ...


def priced(usage: Usage, price: PriceConfig) -> Usage:
    """`usage` with its cost: each canonical bucket at its price per million tokens.
    Reasoning tokens are part of output_tokens and are not priced twice."""
    cost = (
        usage.input_tokens * price.input + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read + usage.cache_write_tokens * price.cache_write
    ) / 1e6
    return Usage(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                 usage.cache_write_tokens, usage.reasoning_tokens, cost)


class Attempts(NamedTuple):
    """How a call went after its retries: a reply, or the last failure."""

    reply: Reply | None
    failure: CallFailed | None
    retries: int
    latency_s: float  # of the last attempt


@dataclass(frozen=True)
class Defaults:
    """Request fields a method does not choose."""

    model: str
    temperature: float | None
    max_tokens: int


class Model:
    """One model for a whole job: provider, retries, budgets and the job's spend."""

    def __init__(self, cfg: LLMConfig, provider: Provider, defaults: Defaults, secret: str = ""):
        self.cfg, self.provider, self.defaults = cfg, provider, defaults
        self._secret = secret
        self._lock = threading.Lock()
        self._job_cost: float | None = None  # read from the job's log at the first trial

    def for_trial(self, ctx: TrialContext) -> TrialModel:
        with self._lock:
            if self._job_cost is None:
                # cost of earlier runs of this job (and of earlier attempts) counts too
                events = read_events(ctx.log.path) if ctx.log.path.exists() else []
                self._job_cost = sum(e.usage.cost_usd for e in events if isinstance(e, ModelCalled))
        return TrialModel(self, ctx)

    def check_budget(self, trial_usage: Usage) -> None:
        cap = self.cfg.max_trial_tokens
        if cap is not None and trial_usage.total_tokens >= cap:
            raise BudgetExhausted(f"trial token budget reached: {trial_usage.total_tokens} of {cap} tokens used")
        cost_cap = self.cfg.max_job_cost_usd
        with self._lock:
            spent = self._job_cost or 0.0
        if cost_cap is not None and spent >= cost_cap:
            raise BudgetExhausted(f"job cost budget reached: ${spent:.4f} of ${cost_cap:.4f} spent")

    def spend(self, cost: float) -> None:
        with self._lock:
            self._job_cost = (self._job_cost or 0.0) + cost

    def call(self, request: Request, site: CallSite, until: float | None = None) -> Attempts:
        """Try up to 1 + retries times, waiting between attempts. `until` (time.perf_counter's
        clock): no attempt or wait runs past it, so that a reply in flight at an agent's wall
        clock does not hold its trial for up to model.timeout_s (600 s) and every retry."""
        failure: CallFailed | None = None
        latency = 0.0
        for attempt in range(self.cfg.retries + 1):
            if attempt:
                assert failure is not None
                delay = failure.retry_after_s
                if delay is None:  # exponential backoff with jitter, so that trials spread out
                    delay = min(self.cfg.max_backoff_s, self.cfg.backoff_s * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
                if until is not None and time.perf_counter() + delay >= until:
                    return Attempts(None, WallClockReached(f"{failure.message}; no retry: the wall clock ends "
                                                           f"before its wait of {delay:.1f}s"), attempt - 1, latency)
                print(f"  {self.provider.name} {request.model} ({site.op}): {self.redact(failure.message)}; "
                      f"retry {attempt}/{self.cfg.retries} in {delay:.1f}s", file=sys.stderr, flush=True)
                time.sleep(delay)
            started = time.perf_counter()
            left = None if until is None else until - started
            if left is not None and left <= 0:
                return Attempts(None, WallClockReached("the wall clock ended before the call"), attempt, 0.0)
            timeout = None if left is None or left >= self.cfg.timeout_s else left
            try:
                return Attempts(self.provider.complete(request, site, timeout), None, attempt, time.perf_counter() - started)
            except CallFailed as e:
                failure, latency = e, time.perf_counter() - started
                if timeout is not None and time.perf_counter() >= until - 0.05:
                    return Attempts(None, WallClockReached(f"cut at the wall clock after {latency:.1f}s "
                                                           f"({e.message})"), attempt, latency)
                if not e.retryable:
                    return Attempts(None, e, attempt, latency)
        return Attempts(None, failure, self.cfg.retries, latency)

    def redact(self, text: str) -> str:
        """Keys never reach events or logs, even where an error message echoes one."""
        return text.replace(self._secret, "[redacted]") if self._secret else text


# How the log writes an agent trial's temporary folder, whose path is new for each attempt
TRIAL_DIR = "{kgb:trial_dir}"
# How it writes the day an agent trial's attempt started, which the CLIs put in their system
# prompts: Claude Code as 2026-12-06, OpenCode as JavaScript's toDateString(), Sun Dec 06 2026
TODAY_ISO, TODAY_JS = "{kgb:today}", "{kgb:today_js}"


def day_forms(day: date) -> dict[str, str]:
    """The log's placeholder for each way the CLIs write `day`."""
    return {TODAY_ISO: day.isoformat(), TODAY_JS: day.strftime("%a %b %d %Y")}


def today() -> date:
    return date.today()


class TrialModel:
    """The model as one trial sees it (`ctx.model`): each call is logged as ModelCalled."""

    def __init__(self, model: Model, ctx: TrialContext):
        self.model, self.ctx = model, ctx
        # an agent trial's temporary folder (set by its harness): the CLIs write its path into
        # their prompts and tool results, so a resumed attempt's requests never matched the
        # logged ones and every call was paid again. The log holds it as TRIAL_DIR, requests
        # are matched so, and a reply answered from the log gets this attempt's path back.
        # The day goes the same way, so that a trial resumed on the next day is not paid again:
        # every day from this attempt's first to the call's, since a CLI may write its start's
        # day past midnight, or the new one (CI, session 58: an attempt cut short across
        # midnight logged the new day's date as written, and its resume paid every call again).
        self.trial_dir: str | None = None
        self.started = today()
        self._logged: dict[str, list[ModelCalled]] = defaultdict(list)
        self.used = Usage()  # this trial's tokens so far, earlier attempts included
        for e in ctx.prior:
            if isinstance(e, ModelCalled):
                self.used += e.usage
                if e.error is None and e.response_blob is not None:
                    self._logged[e.request_hash].append(e)
        self._sent: Counter[str] = Counter()
        self._calls = 0

    def complete(self, messages: Sequence[Message], system: str = "", temperature: float | None = None,
                 tools: Sequence[Tool] = (), deadline: Callable[[], float] | None = None) -> Completion:
        """The model's reply to a conversation. Raises BudgetExhausted (also where the call
        ran into `deadline()`, an agent's wall clock on time.perf_counter's, asked only of a
        call sent to the provider, just before it is sent) or ModelCallFailed."""
        d = self.model.defaults
        if not self.model.cfg.accepts_temperature:
            temperature = None  # the model refuses one: the method's choice cannot apply
        elif temperature is None:
            temperature = d.temperature
        request = Request(d.model, system, tuple(messages), temperature, d.max_tokens, tuple(tools))
        logged_text = self._as_logged(request.text())
        key = hashlib.sha256(logged_text.encode()).hexdigest()
        site = CallSite(self.ctx.problem.op, self.ctx.sample, self._sent[key], self._calls)
        self._sent[key] += 1
        self._calls += 1
        if site.occurrence < len(self._logged[key]):  # answered before this trial was interrupted
            earlier = self._logged[key][site.occurrence]
            assert earlier.response_blob is not None
            uses = (tool_uses_from_json(self._as_sent(self.ctx.blobs.get(earlier.tool_uses_blob)))
                    if earlier.tool_uses_blob else ())
            text = self._as_sent(self.ctx.blobs.get(earlier.response_blob))
            return Completion(text, StopReason(earlier.stop_reason or "other"), key, uses)
        self.model.check_budget(self.used)
        reply, failure, retries, latency = self.model.call(request, site, deadline() if deadline else None)
        # a replayed call carries the recorded call's tokens, but this run paid nothing for it:
        # priced, it counted against the job's cost budget (model.max_job_cost_usd)
        paid = self.model.provider.name != REPLAYED
        usage = priced(reply.usage, self.model.cfg.price if paid else PriceConfig()) if reply else Usage()
        blob = self.ctx.blobs.put(logged_text)  # its hash is the request hash
        self.ctx.emit(ModelCalled(
            job=self.ctx.job, provider=self.model.provider.name, model=request.model,
            request_hash=blob, request_blob=blob,
            response_blob=self.ctx.blobs.put(self._as_logged(reply.text)) if reply else None,
            tool_uses_blob=(self.ctx.blobs.put(self._as_logged(tool_uses_json(reply.tool_uses)))
                            if reply and reply.tool_uses else None),
            usage=usage, raw_usage=reply.raw_usage if reply else {}, latency_s=latency, retries=retries,
            stop_reason=reply.stop_reason.value if reply else None,
            error=self.model.redact(failure.message) if failure else None,
        ))
        self.used += usage
        self.model.spend(usage.cost_usd)
        if reply is None:
            assert failure is not None
            if isinstance(failure, WallClockReached):
                raise BudgetExhausted(f"wall-clock budget reached during a model call: {self.model.redact(failure.message)}")
            error = ProviderUnavailable if failure.outage else ModelCallFailed
            raise error(f"{self.model.provider.name} call failed after {retries} retries: "
                        f"{self.model.redact(failure.message)}")
        return Completion(reply.text, reply.stop_reason, key, reply.tool_uses)

    def _as_logged(self, text: str) -> str:
        if not self.trial_dir:
            return text
        text = text.replace(self.trial_dir, TRIAL_DIR)
        day, last = sorted((self.started, today()))
        while day <= last:
            for placeholder, written in day_forms(day).items():
                text = text.replace(written, placeholder)
            day += timedelta(days=1)
        return text

    def _as_sent(self, text: str) -> str:
        if not self.trial_dir:
            return text
        text = text.replace(TRIAL_DIR, self.trial_dir)
        for placeholder, written in day_forms(today()).items():
            text = text.replace(placeholder, written)
        return text
