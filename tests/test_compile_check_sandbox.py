"""`eval.compile_for` runs the candidate again: in a sandbox no weaker than the judge's.

With `eval.compile_for=90`, every candidate the CPU interpreter found correct is imported and
run again by `kgb.evaluate.crosscompile` (its record and compile steps). Until session 42
those processes had the harness's whole environment (API keys included) and could read kgb's
package and the spec's folder (the operator's solution.py, the family modules' known-good
kernels); what a step prints on stderr comes back in the verdict's logs, which an agent's
check shows it. Now they get the judge's scrubbed environment, and load what they need of
kgb and the spec before confining themselves to the candidate's file."""

from __future__ import annotations

import pytest

from kgb import operators
from kgb.agents.checks import Checked
from kgb.evaluate import EvalSettings, evaluate
from kgb.evaluate.sandbox import landlock_abi

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
SECRET = "sk-audit-crosscompile-0123456789"

# Honest in the judge; in the record step (its cache lies in a kgb-crosscompile- folder) it
# prints what it can read there and fails, so that the harness shows it its stderr.
SNOOP = '''
import os as _os
import sys as _sys

if "kgb-crosscompile-" in _os.environ.get("TRITON_CACHE_DIR", ""):
    _spec = next(a for a in _sys.argv if a.endswith("spec.py"))
    with open(_os.path.join(_os.path.dirname(_spec), "solution.py")) as _f:
        _sys.stderr.write("SOLUTION<" + _f.read()[:120] + ">\\n")
    _sys.stderr.write("KEY<" + _os.environ.get("KGB_AUDIT_KEY", "")[::-1] + ">\\n")
    raise SystemExit(3)
'''


def test_the_compile_check_gives_a_candidate_neither_the_harness_secrets_nor_the_solution(monkeypatch):
    monkeypatch.setenv("KGB_AUDIT_KEY", SECRET)
    spec = operators.load("aten::add")
    source = spec.solution_path.read_text().replace("import triton\n", "import triton\n" + SNOOP, 1)
    verdict = evaluate(source, spec, EvalSettings(device="cpu", case_tags=("smoke",), compile_for=90))
    shown = str(Checked("c1", source, verdict, "call", 1).report()["error"])  # what the agent's check prints
    assert SECRET[::-1] not in shown, "the harness's secret reached the agent: " + shown[-400:]
    assert "SOLUTION<" not in shown, "the operator's solution.py reached the agent: " + shown[-400:]
