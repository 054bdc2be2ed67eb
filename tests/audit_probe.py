"""Every operator's known-good solution, run on its smoke cases in Triton's interpreter, with
its answer given to the judge's audit of a replay's calls (kgb.evaluate.call_audit) as two
calls' answers: prints one JSON line of what the audit said where the case's comparison
accepted the answer, for tests/test_call_audit.py."""

import json
import os

os.environ["TRITON_INTERPRET"] = "1"

from kgb import operators  # noqa: E402
from kgb.evaluate.case_runner import CaseRunner  # noqa: E402
from kgb.evaluate.correctness import clone_exact, compare_outputs  # noqa: E402
from kgb.evaluate.draws import candidate_copy, draw_inputs  # noqa: E402
from kgb.evaluate.interpreter import prepare_interpreter  # noqa: E402


def audited(spec, runner: CaseRunner, case) -> tuple[bool, str | None]:
    """(whether the comparison accepts the solution's answer, what the audit says of it)."""
    entry = spec.entry_of(case)
    inputs = draw_inputs(spec, case, case.seed, "cpu")
    ref_in = clone_exact(inputs)
    expected = runner.reference(entry.name, ref_in, case)
    cand_in = candidate_copy(spec, inputs)
    args, kwargs = entry.bind(cand_in)
    answer = getattr(spec.solution_module(), entry.name)(*args, **kwargs)

    def wrong(result, inputs):
        return compare_outputs(spec, case, *runner._answers(expected, result, ref_in, inputs))[0]

    if wrong(answer, cand_in) is not None:
        return False, None  # the interpreter's answer differs from a GPU's here: nothing to say of the audit
    audit = runner._audit()
    for _ in range(2):  # the same answer twice, as two calls of a replay leave theirs
        audit.record(answer, cand_in)
    return True, audit.disagreement(expected, ref_in, case.reduction, wrong)


prepare_interpreter()
findings = {"cases": 0, "accepted": 0, "kept_whole": 0, "false_alarms": []}
for spec in map(operators.load, operators.discover()):
    runner = CaseRunner(spec, None, "cpu")
    for case in spec.cases_for({operators.CaseTag.SMOKE})[:2]:
        accepted, message = audited(spec, runner, case)
        findings["cases"] += 1
        findings["accepted"] += accepted
        findings["kept_whole"] += accepted and runner._audit().whole
        if message:
            findings["false_alarms"].append(f"{spec.id} {case.name}: {message}")
print(json.dumps(findings))
