"""A job's trials: which it has, and how each of them runs.

One trial per operator and sample, each keyed by what the job's trials share and, where the
method judges what it reads, by what it reads (`trials_of`), so that an edited file is a new
trial (`judged_again` names such operators). A trial runs its method on its operator and
ends as one TrialEnd, or, stopped by the job's cost budget, not at all: the job's next run
goes on with it (`run_trial`, `job_budget_spent`, `budget_note`). Which of them a run starts,
in what order and how many at once is the job's loop (kgb.run); what a method is given and
the record a trial leaves, kgb.trial.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from kgb import methods
from kgb.identity import Identity
from kgb.job import Chip
from kgb.methods import NoCandidate
from kgb.models.model import Model
from kgb.operators import Spec
from kgb.tracking.baselines import BaselineBook
from kgb.tracking.events import Event, ModelCalled, TrialEnd
from kgb.tracking.projections import TrialOutcome
from kgb.trial import BudgetExhausted, InfrastructureFailure, TrialContext, machine_error
from kgb.usage import Usage

Trial = tuple[Spec, int, str]  # a trial to run: its operator's spec, its sample index and its key


def trials_of(specs: dict[str, Spec], method: methods.Method, ident: Identity, samples: int) -> list[Trial]:
    """This run's trials. A key names what the method reads for its operator where it judges
    what it reads (kgb.methods.input_digest: `files`, `transfer`), so an edited file is new."""
    trials = []
    for op, spec in specs.items():
        inputs = methods.input_digest(method, op)
        trials += [(spec, sample, ident.trial_key(op, spec.version, sample, inputs)) for sample in range(samples)]
    return trials


def judged_again(todo: list[Trial], earlier: dict[str, TrialOutcome]) -> list[str]:
    """The operators of `todo` that have a finished trial of the same sample and spec version:
    within a job only what the method read for them (a user's file) tells such trials apart."""
    judged = {(t.op, t.sample, t.spec_version) for t in earlier.values() if t.finished}
    return sorted({spec.id for spec, sample, _ in todo if (spec.id, sample, spec.version) in judged})


def run_trial(method, chip: Chip, spec, settings, log, blobs, job, key, sample, model, prior,
              baselines: BaselineBook | None = None) -> tuple[TrialEnd | None, str]:
    """Run the method on one operator; return how the trial ended and why (None: it did not,
    the job's cost budget stopped it)."""
    from kgb.models import ModelCallFailed, ProviderUnavailable

    if not chip.present:
        return TrialEnd.SKIPPED, chip.reason
    ctx = TrialContext(
        problem=spec.problem(chip_notes=chip.notes, show_reference=True), spec=spec,
        settings=settings, log=log, blobs=blobs, job=job, key=key, sample=sample,
        model=None, prior=prior, baselines=baselines,
    )
    if model is not None:
        ctx.model = model.for_trial(ctx)  # its calls log themselves into this trial
    try:
        method.solve(ctx)
    except NoCandidate as e:
        return TrialEnd.NO_CANDIDATE, str(e)
    except BudgetExhausted as e:
        if job_budget_spent(model):  # the job's budget, not the trial's: no end, see job_budget_spent
            print(f"  {spec.id} stopped by the job's cost budget: no result (a run with a larger budget goes on)",
                  file=sys.stderr)
            return None, str(e)
        return TrialEnd.BUDGET, str(e)
    except (ProviderUnavailable, InfrastructureFailure) as e:  # no verdict on the method: retried
        print(f"  infrastructure failure on {spec.id} (a re-run retries it): {e}", file=sys.stderr)
        return TrialEnd.INFRA_ERROR, str(e)
    except ModelCallFailed as e:  # after its retries: it ends this trial, not the sweep
        print(f"  model call failed on {spec.id}: {e}", file=sys.stderr)
        return TrialEnd.METHOD_ERROR, f"model call failed: {e}"
    except Exception as e:  # noqa: BLE001 - a method bug ends its trial, not the sweep
        if machine_error(e):
            print(f"  infrastructure failure on {spec.id} (a re-run retries it): {e}", file=sys.stderr)
            return TrialEnd.INFRA_ERROR, f"{type(e).__name__}: {e}"
        print(f"  method error on {spec.id}: {type(e).__name__}: {e}", file=sys.stderr)
        return TrialEnd.METHOD_ERROR, f"{type(e).__name__}: {e}"
    if ctx.proposed == 0:
        return TrialEnd.NO_CANDIDATE, "the method proposed no candidate"
    return TrialEnd.COMPLETED, ""


def job_budget_spent(model: Model | None) -> bool:
    """Whether the job's cost budget (model.max_job_cost_usd) refuses further calls. A trial it
    stopped has no result: a larger budget lets its method go on, so it is left unfinished and
    the next run resumes it, paying only for new calls (until session 45 it ended `budget`,
    counted as a failure and never run again). A trial whose own budget ran out is finished."""
    if model is None or model.cfg.max_job_cost_usd is None:
        return False
    try:
        model.check_budget(Usage())  # no tokens used: only the job's cap can refuse it
    except BudgetExhausted:
        return True
    return False


def budget_note(events: Sequence[Event], cap: float, kept: int, total: int) -> str:
    """What the job's cost budget left undone. The spend is added up as the summary's cost is
    (fsum), so the two say the same sum (they once said $0.0110 here and $0.0109 there)."""
    spent = math.fsum(e.usage.cost_usd for e in events if isinstance(e, ModelCalled))
    return (f"the job's cost budget is spent (${spent:.4f} of model.max_job_cost_usd={cap}): {total - kept} of {total} "
            "trial(s) have no result; run the same command with a larger budget to go on")
