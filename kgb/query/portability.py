"""Portability: how a method's results hold up from chip to chip (the paper's Table 3 view).

One row per method configuration (the leaderboard's: `aiko agent.max_turns=4` apart from
`aiko`) x model x operator set x chip x where the kernels came from x judging settings:
operators run, accuracy and geometric mean speedup (the leaderboard's definitions: the
operator is the unit, at its best sample), and the change against the reference chip
(NVIDIA by default) over the operators run on both.

A `method=transfer` job is shown under the method and model that wrote its kernels, with
`transferred_from` naming the chip that run judged on (its pinned `method.from_*` params);
every other row's kernels are the method's own for its chip. Beside the method's own row on
chip E, a transfer row on E separates "the method cannot write for E" from "kernels
written for NVIDIA do not run on E".

The reference row of a row is the method's own row on the reference chip under the same
judging protocol (the settings less the device word), so a smoke-only run is never
compared with a full one.

Operators are counted as on the leaderboard (kgb.query.scope): those no longer in the
source are left out (`removed`), and a row missing operators that an interrupted or
unfinished job left unjudged says so (`incomplete`).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from kgb.evaluate.verdict import geomean
from kgb.query.leaderboard import best_speedups, by_job
from kgb.query.scope import EVERYTHING, JobFacts, Scope
from kgb.query.store import Store
from kgb.tracking.summary import TrialRow

REFERENCE = "nvidia"
TRANSFER = "transfer"  # kgb.methods.transfer's name; not imported, so queries stay light
SOURCE_PARAMS = ("method.from_method", "method.from_model", "method.from_chip")
# the source method's parameters that differ from its defaults (TrialRow.method_params); a
# transfer job before session 46 pinned none, and "" is the defaults
SOURCE_METHOD_PARAMS = "method.from_params"


@dataclass(frozen=True)
class Row:
    method: str  # for a transfer job, the method that wrote the kernels
    model: str
    source: str  # operator set: aten, vllm, cublas
    chip: str  # where the kernels were judged
    transferred_from: str | None  # a transfer job's source chip; None: the method's own kernels for `chip`
    trials: int  # operators run (skipped excluded)
    correct: int
    accuracy: float | None  # None where every trial was skipped (the leaderboard leaves it blank too)
    incomplete: str  # as the leaderboard's: "interrupted: 12 of 210 operators judged", else ""
    geomean_speedup: float | None  # over correct, timed operators
    common: int  # operators run both here and on the reference chip (0 on the reference row itself)
    accuracy_drop: float | None  # reference accuracy minus this one, over the common operators
    speedup_ratio: float | None  # geomean speedup here over there, on operators correct and timed on both
    skipped: int
    removed: int  # operators no longer in the source whose trials are left out
    settings: str


COLUMNS = tuple(f.name for f in dataclasses.fields(Row))


@dataclass(frozen=True)
class Group:
    """The best result per operator of one row: op -> speedup (0.0 untimed) where correct."""

    ops: frozenset[str]
    best: dict[str, float]
    skipped: int
    removed: int
    incomplete: str


def transfer_sources(uri: str, experiments: Sequence[str] = ()) -> dict[str, tuple[str, str, str, str]]:
    """Transfer job id -> (method, model, chip, method parameters) of the run its kernels came
    from, of the transfer jobs in the experiments named (every one where none is)."""
    found = Store(uri, experiments).job_params(TRANSFER, (*SOURCE_PARAMS, SOURCE_METHOD_PARAMS))
    return {job: (*(p[k] for k in SOURCE_PARAMS), _param(p.get(SOURCE_METHOD_PARAMS)))  # type: ignore[misc]
            for job, p in found.items() if all(_param(p.get(k)) for k in SOURCE_PARAMS)}


def _param(value: str | None) -> str:
    """A logged param's value; "" where it is absent or was logged from None."""
    return "" if value in (None, "None") else value  # type: ignore[return-value]


Part = tuple[list[TrialRow], Scope]  # the trials of one origin's jobs, and the scope of those jobs


def by_origin(trials: list[TrialRow], sources: dict[str, tuple[str, str, str, str]],
              scope: Scope = EVERYTHING) -> dict[str | None, Part]:
    """The trials and the jobs by the chip a transfer took their kernels from (None: the
    method's own); a transfer trial, and a transfer job's trials table header, is renamed to
    the method and model that wrote its kernel. Each origin counts only its own jobs, so that
    a job that finished no trial yet has its row under its own origin, never under another."""
    trials_of: dict[str | None, list[TrialRow]] = defaultdict(list)
    for r in trials:
        if r.method == TRANSFER and r.job in sources:
            method, model, chip, params = sources[r.job]
            # its own parameters (from=..., from_chip=...) name where the kernels came from: shown as
            # such; the source's own make its row the source method configuration's (until session
            # 46 always the defaults', so a `files dir=...` source had no reference row to compare with)
            trials_of[chip].append(dataclasses.replace(r, method=method, model=model, method_params=params))
        else:
            trials_of[None].append(r)
    jobs_of: dict[str | None, dict[str, JobFacts]] = defaultdict(dict)
    for job, facts in scope.jobs.items():
        if job in sources:
            jobs_of[sources[job][2]][job] = _as_source(facts, sources[job])
        else:
            jobs_of[None][job] = facts
    return {origin: (trials_of.get(origin, []), Scope(scope.operators, jobs_of.get(origin, {})))
            for origin in {**dict.fromkeys(trials_of), **dict.fromkeys(jobs_of)}}


def _as_source(facts: JobFacts, source: tuple[str, str, str, str]) -> JobFacts:
    """A transfer job's facts, its header renamed as its trials are (by_origin)."""
    if facts.info is None:
        return facts
    method, model, _, params = source
    return dataclasses.replace(facts, info=dataclasses.replace(facts.info, method=method, model=model,
                                                               method_params=params))


def protocol(settings: str) -> str:
    """The judging settings less the device they name: what must match across chips."""
    return settings.partition(" ")[2]


def rows(trials: list[TrialRow], sources: dict[str, tuple[str, str, str, str]], reference: str = REFERENCE,
         scope: Scope = EVERYTHING) -> list[Row]:
    groups: dict[tuple[str, str, str, str, str | None, str], Group] = {}  # method, model, source, chip, from, settings
    for origin, (part, part_scope) in by_origin(trials, sources, scope).items():
        for (method, model, source, chip, settings), job in by_job(part, part_scope).items():
            groups[method, model, source, chip, origin, settings] = Group(
                frozenset(job.per_op), best_speedups(job), len(job.skipped), len(job.removed), job.incomplete())
    refs = {(m, mo, s, protocol(st)): g for (m, mo, s, c, f, st), g in groups.items() if c == reference and f is None}
    table = []
    for key, g in groups.items():
        method, model, source, chip, origin, settings = key
        own_reference = chip == reference and origin is None
        ref = None if own_reference else refs.get((method, model, source, protocol(settings)))
        timed = [s for s in g.best.values() if s > 0]
        table.append(Row(
            method=method, model=model, source=source, chip=chip, transferred_from=origin,
            trials=len(g.ops), correct=len(g.best), accuracy=len(g.best) / len(g.ops) if g.ops else None,
            incomplete=g.incomplete, geomean_speedup=geomean(timed) if timed else None, **against(g, ref),
            skipped=g.skipped, removed=g.removed, settings=settings,
        ))
    return sorted(table, key=lambda r: (r.method, r.model, r.source, protocol(r.settings), r.chip != reference,
                                        r.chip, r.transferred_from or ""))


def against(here: Group, ref: Group | None) -> dict[str, float | int | None]:
    """The common operators, the accuracy drop and the speedup ratio against the reference."""
    if ref is None:
        return {"common": 0, "accuracy_drop": None, "speedup_ratio": None}
    common = here.ops & ref.ops
    if not common:
        return {"common": 0, "accuracy_drop": None, "speedup_ratio": None}
    drop = (sum(op in ref.best for op in common) - sum(op in here.best for op in common)) / len(common)
    both = [op for op in common if here.best.get(op, 0.0) > 0 and ref.best.get(op, 0.0) > 0]
    ratio = geomean([here.best[op] for op in both]) / geomean([ref.best[op] for op in both]) if both else None
    return {"common": len(common), "accuracy_drop": drop, "speedup_ratio": ratio}
