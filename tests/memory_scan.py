"""What a process that runs candidate code holds of the operators' hidden cases.

Every engine imports the spec libraries (kgb.operators.import_spec_libraries) before it forks
judges and candidate processes; whatever those modules hold, a candidate can find (`sys.modules`,
`gc`). `scan()` runs a fresh process that imports them, as an engine does, and reports the
case-table modules it imported, the `Case` objects of hidden cases in it, and every string it
holds in a container or a code object's constants, where a case table's names would sit.

    python tests/memory_scan.py [OP_PREFIX ...]

prints, for each operator (or those whose ids start with a prefix), how many of its hidden
cases' names such a process holds that a process without the spec libraries does not.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r'''
import gc, json, sys, types
from kgb import operators

if sys.argv[1] == "libraries":
    operators.import_spec_libraries()
import kgb.evaluate.candidate, kgb.evaluate.candidate_process, kgb.evaluate.engine_process, kgb.evaluate.judge  # noqa: E401

strings = set()


def constants(code):
    for c in code.co_consts:
        if isinstance(c, str):
            strings.add(c)
        elif isinstance(c, types.CodeType):
            constants(c)
        elif isinstance(c, tuple | frozenset):
            strings.update(x for x in c if isinstance(x, str))


hidden = []
for o in gc.get_objects():
    if isinstance(o, tuple | list | set | frozenset):
        strings.update(x for x in o if isinstance(x, str))
    elif isinstance(o, dict):
        strings.update(x for x in o.values() if isinstance(x, str))
        strings.update(x for x in o if isinstance(x, str))
    elif isinstance(o, types.FunctionType):
        constants(o.__code__)
    elif isinstance(o, operators.Case):
        strings.add(o.name)
        if o.tag == "check":
            hidden.append(o.name)
print(json.dumps({"case_modules": sorted(n for n in sys.modules if n.endswith("_cases")),
                  "hidden_cases": hidden, "strings": sorted(strings)}))
'''


def scan(libraries: bool = True) -> dict:
    """What a fresh process holds once it imported what an engine imports (without the spec
    libraries: the words any process of kgb's holds, "f32", "empty", "transposed")."""
    done = subprocess.run([sys.executable, "-c", PROBE, "libraries" if libraries else "-"],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def held(found: dict, prefixes: tuple[str, ...] = ("",), words: dict | None = None) -> dict[str, tuple[int, int]]:
    """For each operator: (its hidden cases whose names the process holds, its hidden cases);
    not counting the names that the process `words` describes holds too."""
    from kgb import operators

    strings = set(found["strings"]) - set(words["strings"] if words else ())
    out = {}
    for op in operators.discover():
        if op.startswith(prefixes):
            names = [c.name for c in operators.load(op).cases if c.tag == "check"]
            out[op] = (sum(n in strings for n in names), len(names))
    return out


if __name__ == "__main__":
    found, words = scan(), scan(libraries=False)
    print("case modules imported:", found["case_modules"] or "none")
    print("hidden Case objects:", len(found["hidden_cases"]))
    for op, (n, total) in held(found, tuple(sys.argv[1:]) or ("",), words).items():
        print(f"{op:50s} {n:3d} of {total:3d} hidden names held (beyond the words any kgb process holds)")
