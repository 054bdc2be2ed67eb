"""Replay: answer every call from the completions logged under an earlier run's root.

`model=replay model.from=OUTPUTS_DIR` re-runs a method for free, e.g. after an evaluator
fix or on another chip. A request is answered by the recorded call of the same operator
and sample that sent the same request (the n-th time it is sent gets the n-th answer,
as passk sends one request k times); `model.match=position` answers the n-th call of a
trial with the recorded n-th call instead, for prompts that differ (other chip notes).
Tokens are those the recorded call used; the cost is what this run pays: nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from kgb.config import ReplayConfig
from kgb.models.content import tool_uses_from_json
from kgb.models.failures import CallFailed
from kgb.models.model import CallSite, Defaults, Reply, Request, StopReason
from kgb.tracking.blobs import BlobStore
from kgb.tracking.log import read_events
from kgb.tracking.projections import run_started, trial_outcomes
from kgb.usage import Usage


@dataclass(frozen=True)
class Recorded:
    request_hash: str
    reply: Reply


class ReplayProvider:
    """Answers from the ModelCalled events and blobs under `model.from`; no network."""

    name = "replay"

    def __init__(self, cfg: ReplayConfig):
        root = Path(getattr(cfg, "from")).expanduser()
        logs = sorted(root.glob("jobs/*/events.jsonl"))
        if not logs:
            raise ValueError(f"model.from={root}: no event logs under {root}/jobs/ (give a run's tracking.root)")
        self.match = cfg.match
        if self.match not in ("request", "position"):
            raise ValueError(f"model.match={cfg.match}: choose request or position")
        blobs = BlobStore(root / "blobs")
        settings: dict[str, set[tuple[float | None, int]]] = defaultdict(set)
        # model -> (op, sample) -> one list of successful calls per recorded trial, in order
        trials: dict[str, dict[tuple[str, int], list[list[Recorded]]]] = defaultdict(lambda: defaultdict(list))
        for log in logs:
            events = read_events(log)
            started = run_started(events)
            if started is None or started.config.get("model", {}).get("provider") in (None, "none", "replay"):
                continue
            model_cfg = started.config["model"]
            settings[model_cfg["name"]].add((model_cfg["temperature"], int(model_cfg["max_tokens"])))
            for t in trial_outcomes(events).values():
                calls = [Recorded(c.request_hash, Reply(
                    blobs.get(c.response_blob), StopReason(c.stop_reason or "other"),
                    Usage(c.usage.input_tokens, c.usage.output_tokens, c.usage.cache_read_tokens,
                          c.usage.cache_write_tokens, c.usage.reasoning_tokens),
                    c.raw_usage, tool_uses_from_json(blobs.get(c.tool_uses_blob)) if c.tool_uses_blob else (),
                )) for c in t.calls if c.error is None and c.response_blob]
                if calls:
                    trials[model_cfg["name"]][(t.op, t.sample)].append(calls)
        names = sorted(trials)
        if cfg.name != "replay":
            names = [n for n in names if n == cfg.name]
        if len(names) != 1:
            found = ", ".join(sorted(trials)) or "none"
            raise ValueError(f"model.from={root}: recorded models: {found}; "
                             f"{'choose one with model.name=NAME' if names else f'unknown model {cfg.name!r}'}")
        self.model = names[0]
        if len(settings[self.model]) != 1:
            raise ValueError(f"model.from={root}: runs of {self.model} with different temperature/max_tokens "
                             f"{sorted(settings[self.model])}; point model.from at a root holding one setting")
        temperature, max_tokens = next(iter(settings[self.model]))
        self.defaults = Defaults(self.model, temperature, max_tokens)
        self.trials = trials[self.model]

    def complete(self, request: Request, site: CallSite, timeout_s: float | None = None) -> Reply:
        for calls in self.trials.get((site.op, site.sample), []):
            if self.match == "position":
                if site.index < len(calls):
                    return calls[site.index].reply
                continue
            same = [c for c in calls if c.request_hash == request.hash]
            if site.occurrence < len(same):
                return same[site.occurrence].reply
        where = f"call {site.index + 1}" if self.match == "position" else f"this request (sent {site.occurrence + 1} time(s))"
        raise CallFailed(f"no recorded completion of {site.op} sample {site.sample} for {where}", retryable=False)

    def models(self) -> list[str] | None:
        return [self.model]
