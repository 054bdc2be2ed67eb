"""The kgb modules that specs import hold no known-good solution: every engine imports them
(kgb.operators.import_spec_libraries) before it forks judges and candidate processes, so a
candidate could read whatever text they hold through `sys.modules`, and run an operator's
known-good kernels as its own. The solutions' text lives in modules only the generators
import (`*_solutions.py`) and in kernel files they read (`kernels/`)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r'''
import json, re, sys
from kgb.operators import import_spec_libraries

import_spec_libraries()
# and what an engine, its judges and candidate processes import besides
import kgb.evaluate.candidate, kgb.evaluate.candidate_process, kgb.evaluate.engine_process, kgb.evaluate.judge  # noqa: E401
# Triton code, not a task text that names a Triton function in passing ("`tl.rand(seed, ...)`")
CODE = re.compile(r"@triton\.jit|(return|=)\s*tl\.\w|tl\.(load|store)\(")


def holds(value, depth=0):
    if depth > 4:
        return False
    if isinstance(value, str):
        return CODE.search(value) is not None
    if isinstance(value, dict):
        return any(holds(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(holds(v, depth + 1) for v in value)
    fields = getattr(value, "__dataclass_fields__", None)
    if fields and not isinstance(value, type):
        return any(holds(getattr(value, f), depth + 1) for f in fields)
    return False


found = {name: sorted(k for k, v in vars(module).items() if not k.startswith("__") and holds(v))
         for name, module in sorted(sys.modules.items()) if name.startswith("kgb") and module is not None}
print(json.dumps({name: keys for name, keys in found.items() if keys}))
print(json.dumps(sorted(name for name in sys.modules if name.endswith("_solutions"))))
'''


def test_no_module_a_spec_may_import_holds_a_solutions_text():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    holding, solution_modules = map(json.loads, done.stdout.splitlines()[-2:])
    assert holding == {}, "move these into a *_solutions module or kernels/ (docs/adding-an-operator.md)"
    assert solution_modules == []
