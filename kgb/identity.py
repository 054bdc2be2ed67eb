"""A trial's identity: everything that reaches the prompt or the verdict, in one place.

Two trials with the same key asked the same question in the same words and were judged
under the same settings, so a finished one stands for the other and is not run (or paid
for) again. What reaches the prompt: the method's parameters, the model and how it is
asked, the operator and its spec version, the chip and its notes; for a method that judges
what it reads rather than what it writes (`files`, `transfer`), what it read for the
operator (its `input_digest`, kgb.methods). What reaches the verdict: the device, the
resolved case set, the timeout, the sm_XX compile check, the timing protocol where
anything is timed, and the judge's version. What reaches neither
is left out, so that changing it makes no new trial: `method.samples` (a new sample index
is a new trial; raising the count keeps samples 0..N-1), `method.concurrency`, and how
model calls are made and paid for (retries, prices, the model's budgets; see `Keyed.not_identity`;
an agent harness's budgets under `method.agent` are part of the method, kgb.agents.config).
So a trial the job's cost budget stops is no result: it stays unfinished (kgb.trials.job_budget_spent).

`Judging.summary()` is the readable line of the verdict's settings; the job's RunStarted
carries it (`settings`) so that results judged differently are never counted together.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kgb.evaluate import JUDGE_VERSION, EvalSettings

# eval.cases -> the case tags checked (`auto`: smoke on the CPU, all on a GPU)
CASE_SETS = {"smoke": ("smoke",), "check": ("smoke", "check"), "all": ("smoke", "check", "bench")}


def digest(value: Any, length: int = 16) -> str:
    """A short, stable hash of a JSON-able value (key order does not matter)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:length]


@dataclass(frozen=True)
class Judging:
    """The settings a verdict is given under."""

    device: str  # cpu (Triton interpreter), cuda, ...
    cases: tuple[str, ...]  # case tags checked for correctness
    timeout_s: float
    compile_for: int | None  # sm_XX the CPU run also compiles correct kernels for
    timed: tuple[str, ...]  # case tags timed (none on the CPU)
    repeats: int | None  # timing protocol; None where nothing is timed
    warmup: int | None
    judge_version: int | None  # kgb.evaluate.JUDGE_VERSION; None in logs older than it

    @classmethod
    def of(cls, settings: EvalSettings) -> Judging:
        timed = tuple(settings.time_cases)
        return cls(
            device=settings.device, cases=tuple(settings.case_tags), timeout_s=float(settings.timeout_s),
            compile_for=settings.compile_for if settings.device == "cpu" else None,
            timed=timed, repeats=settings.repeats if timed else None, warmup=settings.warmup if timed else None,
            judge_version=JUDGE_VERSION,
        )

    def summary(self) -> str:
        """One line, e.g. `cpu cases=smoke timeout=300s judge=v2`: what the leaderboard groups by."""
        parts = [self.device, f"cases={'+'.join(self.cases)}", f"timeout={self.timeout_s:g}s"]
        if self.compile_for is not None:
            parts.append(f"compile_for=sm_{self.compile_for}")
        if self.timed:
            parts.append(f"timed={'+'.join(self.timed)} repeats={self.repeats} warmup={self.warmup}")
        parts.append(f"judge=v{self.judge_version}" if self.judge_version is not None else "judge=unversioned")
        return " ".join(parts)


@dataclass(frozen=True)
class Identity:
    """What a job's trials share; a trial adds its operator, spec version and sample."""

    method: dict[str, Any]  # method parameters that reach the prompt or the candidates
    model: dict[str, Any]  # model name, endpoint and request parameters
    chip: str  # the concrete chip (`auto` resolved)
    chip_notes: str  # the hardware advice shown to the model
    judging: Judging

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def trial_key(self, op: str, spec_version: int, sample: int, inputs: str | None = None) -> str:
        """Deterministic id of a trial: the same question asked and judged the same way.
        `inputs`: a digest of what the method read for `op` (a user's file), where it judges that."""
        read = {"inputs": inputs} if inputs is not None else {}
        return digest({**self.as_dict(), "op": op, "v": spec_version, "sample": sample, **read})

    def job_id(self, source: str, ops: list[str] | None) -> str:
        """Readable prefix and a hash of the identity and the operator selection: `ops` is an
        explicit `ops=` list, None for the whole source, whatever it holds today (so that an
        operator added to it is a new trial of the same job, not a new job)."""
        method, model = self.method["name"], self.model["name"]
        tail = digest({**self.as_dict(), "source": source, "ops": ops}, 10)
        return f"{method}-{model}-{source}-{self.chip}-{tail}".replace("/", "_")

    @property
    def settings(self) -> str:
        return self.judging.summary()


def v1_settings(config: dict[str, Any], device: str) -> str:
    """The settings summary of a schema-1 RunStarted, rebuilt from its resolved config.
    Those logs predate the judge's version, so it reads `judge=unversioned`."""
    e = config.get("eval", {})
    on_cpu = device.startswith("cpu")
    cases = e.get("cases", "auto")
    cases = cases if cases != "auto" else ("smoke" if on_cpu else "all")
    timed = () if on_cpu else ("bench",)
    return Judging(
        device="cpu" if on_cpu else "cuda", cases=CASE_SETS.get(cases, (cases,)), timeout_s=float(e.get("timeout_s", 300.0)),
        compile_for=e.get("compile_for") if on_cpu else None, timed=timed,
        repeats=e.get("repeats") if timed else None, warmup=e.get("warmup") if timed else None, judge_version=None,
    ).summary()
