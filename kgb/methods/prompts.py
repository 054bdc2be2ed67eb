"""Prompts built from a Problem, and the evaluator's feedback as the next user message.

One template per operator source (templates/<source>.md, `string.Template` with `$name`,
`$op`, `$task`, `$signatures`, `$reference_section`, `$chip_section`) and one system
prompt. A template that leaves out `$reference_section` never shows the reference. The
Problem holds no solution and no cases, so neither can reach a prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from kgb.evaluate.verdict import Status, Verdict
from kgb.methods.extraction import Attempt
from kgb.operators import Problem

TEMPLATES = Path(__file__).parent / "templates"
LOG_CHARS = 4000  # the tail of a compile log or traceback that a model is shown


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str


def initial(problem: Problem) -> Prompt:
    """The first prompt for an operator: its source's template filled from the Problem."""
    template = TEMPLATES / f"{problem.source}.md"
    if not template.is_file():
        raise ValueError(f"no prompt template for source {problem.source!r} ({template})")
    reference = (
        f"\n## Reference semantics (PyTorch)\n\n```python\n{problem.reference.strip()}\n```\n"
        if problem.reference.strip() else ""
    )
    chip = f"\n## Target chip\n\n{problem.chip_notes.strip()}\n" if problem.chip_notes.strip() else ""
    user = Template(template.read_text()).substitute(
        name=problem.name, op=problem.op, task=problem.task.strip(), signatures=problem.signatures.strip(),
        reference_section=reference, chip_section=chip,
    )
    return Prompt(system=(TEMPLATES / "system.md").read_text().strip(), user=user.strip())


def feedback(attempt: Attempt, keep_improving: bool = False) -> str:
    """The next user message of a refinement: what the evaluator made of the last reply."""
    ask = "Reply with the complete corrected module in one ```python block."
    if attempt.evaluation is None:
        return f"Your reply contained no usable code: {attempt.extracted.reason}.\n\n{ask}"
    v = attempt.evaluation.verdict
    failed = next((c for c in v.cases if c.status != Status.CORRECT), None)
    lines = [f"Your kernel was evaluated: {v.status.value}."]
    if v.status == Status.CORRECT:
        lines.append(_speed(v))
        ask = ("Make it faster without breaking correctness. Reply with the complete module in one ```python block."
               if keep_improving else ask)
    elif v.status == Status.WRONG_OUTPUT and failed is not None:
        errors = ", ".join(
            f"{label} {value:.3g}" for label, value in
            (("max abs error", failed.max_abs_err), ("max rel error", failed.max_rel_err)) if value is not None
        )
        message = failed.message.removeprefix(f"case {failed.name}: ")
        lines.append(f"First mismatching case {failed.name}: {message}" + (f" ({errors})" if errors else ""))
    else:
        lines.append(v.message)
    if v.status == Status.REJECTED:
        if v.torch_ops:
            lines.append(f"PyTorch ops it dispatched outside Triton kernels: {', '.join(v.torch_ops)}")
        if v.kernels:
            lines.append(f"Triton kernels it launched: {', '.join(v.kernels)}")
    if v.status in (Status.COMPILE_ERROR, Status.RUNTIME_ERROR, Status.TIMEOUT) and v.logs.strip():
        lines.append(f"Log (last {LOG_CHARS} characters):\n```text\n{_scrub(v.logs)[-LOG_CHARS:]}\n```")
    return "\n\n".join([*lines, ask])


def _speed(v: Verdict) -> str:
    if v.speedup is None:
        return "Its speed is not measured on this chip."
    return (f"Speedup {v.speedup:.2f}x over the {v.baseline or 'baseline'} "
            f"({v.latency_us:.1f} us against {v.baseline_us:.1f} us, geometric means over the timed cases).")


def _scrub(log: str) -> str:
    """Drop the worker's temporary directory from paths, so that the same failure gives
    the same feedback (and the same request) in every run."""
    return re.sub(r"\S*kgb-eval-[^/\s]*/", "", log)
