"""A candidate process holds none of the cases an agent is not shown.

An agent's `./check` judges its kernel on the smoke and bench cases; the final judgement also
uses the `check` cases, which it never sees, to test what it was not shown. Until session 43
the candidate process had them all in memory: the judge loaded the spec before forking it,
and on a GPU sent it the spec's whole text to draw bench inputs with, so a candidate could
find the hidden cases (`gc`, `sys.modules`) and print them into the agent's check report.
The judge now forks its candidate process before it loads the spec, and sends the spec's text
without its CASES statement, with the shown cases as data (`kgb.shown_spec`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from test_redraw import KERNEL as TWICE_KERNEL

from kgb import operators
from kgb.evaluate import EvalSettings, evaluate
from kgb.shown_spec import text_without_cases

HIDDEN = "hidden-shape-7919"
SPEC = f'''
"""Twice x, into out."""

import torch

from kgb.operators import Case

VERSION = 1
SIGNATURES = """
def twice(x: torch.Tensor, out: torch.Tensor) -> None:
    \\"\\"\\"out = 2 * x\\"\\"\\"
"""
OUTPUT_ARGS = ("out",)
CASES = [
    Case("small", "smoke", {{"n": 64}}, seed=3),
    # a comment about the hidden case, {HIDDEN}
    Case("{HIDDEN}", "check", {{"n": 7919}}, seed=5),
    Case("big", "bench", {{"n": 4096}}, seed=4),
]


def make_inputs(case, gen, device):
    n = case.params["n"]
    return {{"x": torch.randn(n, generator=gen, device=device), "out": torch.empty(n, device=device)}}


def reference(x, out):
    out.copy_(2 * x)
'''

# Fails with what it found: the names of the cases in its process, and any text naming one
PROBE = f'''
import sys
import triton
import triton.language as tl


def _found():
    gc = sys.modules["g" + "c"]  # the static check refuses `import gc` by name, not this
    names = sorted({{o.name for o in gc.get_objects() if type(o).__name__ == "Case"}})
    texts = [o for o in gc.get_objects() if isinstance(o, str) and "{HIDDEN[:6]}" + "{HIDDEN[6:]}" in o]
    return f"FOUND cases={{names}} texts={{len(texts)}}"


def twice(x, out):
    raise RuntimeError(_found())
'''


def _spec(tmp_path: Path) -> Path:
    folder = tmp_path / "ops" / "aten" / "twice"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(SPEC)
    return folder / "spec.py"


def test_a_judged_candidate_finds_no_hidden_case_in_its_process(tmp_path):
    spec = operators.load_spec(_spec(tmp_path))
    verdict = evaluate(PROBE, spec, EvalSettings(device="cpu", case_tags=("smoke",), compile_cache=None))
    assert "FOUND" in verdict.message, verdict.message
    assert HIDDEN not in verdict.message
    assert "texts=0" in verdict.message, verdict.message


def test_the_spec_a_candidate_process_draws_with_has_the_shown_cases_only(tmp_path):
    """On a GPU the judge gives the candidate process the spec, to draw bench inputs itself.
    Forked from a fresh process, as from a judge: this one may have loaded the spec already."""
    script = textwrap.dedent(f"""
        import torch
        from pathlib import Path
        from kgb import operators
        from kgb.evaluate.candidate_process import CandidateProcess
        from kgb.evaluate.phases import Phases
        from kgb.evaluate.sandbox import Limits
        from kgb.evaluate.timing_lock import TimingLock

        process = CandidateProcess("cpu", Path({str(tmp_path / "ws")!r}), Limits(cpu_s=120)).wait_ready()
        process.exclusive = TimingLock(None, Phases())
        spec = operators.load_spec(Path({str(_spec(tmp_path))!r}))  # after the fork, as the judge does
        process.give_spec(spec)
        assert process.load({PROBE!r}).failure is None
        x = torch.zeros(4)
        print(process.call("twice", (x, x.clone()), {{}}).failure[1])
        process.close()
    """)
    (tmp_path / "ws").mkdir()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cases=['big', 'small']" in done.stdout, done.stdout  # the shown ones came, as data
    assert HIDDEN not in done.stdout and "texts=0" in done.stdout, done.stdout


DRAW_WITHOUT_CASES = r"""
import json, pickle, sys
import torch
from kgb import operators
from kgb.shown_spec import text_without_cases  # the judge's side: it sends the text
from kgb.evaluate import tensor_storage
from kgb.evaluate.draws import digest

operators.import_spec_libraries()
import kgb.evaluate.candidate  # noqa: F401 - what a candidate process has imported besides
expected = pickle.load(open(sys.argv[1], "rb"))


class NoMoreKgb:  # a confined candidate process can read no file of kgb's
    def find_spec(self, name, path=None, target=None):
        if name.startswith("kgb"):
            raise ImportError(f"{name} was not imported before the sandbox closed")
        return None


sys.meta_path.insert(0, NoMoreKgb())
failed = {}
for op, (path, shown, smoke, outputs, digests) in expected.items():
    try:
        spec = operators.spec_from_text(text_without_cases(path), path, lambda: pickle.loads(shown))
        case = next(c for c in spec.cases if c.name == smoke)
        value = spec.module.make_inputs(case, torch.Generator().manual_seed(case.seed), "cpu")
        drawn = [digest(s) for s in tensor_storage.storages_in({k: v for k, v in value.items() if k not in outputs}).by_id.values()]
        if drawn != digests:
            failed[op] = "drew other inputs"
    except Exception as exc:
        failed[op] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failed))
"""


def test_a_candidate_process_draws_every_operators_inputs_from_the_spec_without_its_cases(tmp_path):
    """What a GPU candidate process execs of each spec (its text without CASES, the shown cases
    given as data), with nothing of kgb importable beyond what an engine imported: the hidden
    cases are nowhere in it, and make_inputs draws a smoke case as the whole spec does."""
    import pickle
    import re

    import torch

    from kgb.evaluate import tensor_storage
    from kgb.evaluate.draws import digest

    expected = {}
    for op, path in operators.discover().items():
        spec = operators.load_spec(path)
        text = text_without_cases(path)
        assert not re.search(r"^CASES\b", text, re.M), op
        hidden = [c.name for c in spec.cases if c.tag == "check"]
        assert not [h for h in hidden if f"'{h}'" in text or f'"{h}"' in text], op
        shown = [c for c in spec.cases if c.tag != "check"]
        smoke = next(c for c in shown if c.tag == "smoke")
        value = spec.module.make_inputs(smoke, torch.Generator().manual_seed(smoke.seed), "cpu")
        outputs = spec.output_args  # not compared: torch.empty, garbage
        digests = [digest(s) for s in tensor_storage.storages_in({k: v for k, v in value.items() if k not in outputs}).by_id.values()]
        expected[op] = (path, pickle.dumps(shown), smoke.name, outputs, digests)
    (tmp_path / "expected.pickle").write_bytes(pickle.dumps(expected))
    done = subprocess.run([sys.executable, "-c", DRAW_WITHOUT_CASES, str(tmp_path / "expected.pickle")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {}


# test_redraw's kernel, which in the compile check's record step (its cache lies in a
# kgb-crosscompile- folder) first says which of this spec's cases its process holds, and fails
KERNEL = '''
import os
import sys

if "kgb-crosscompile-" in os.environ.get("TRITON_CACHE_DIR", ""):
    gc = sys.modules["g" + "c"]
    ours = ("small", "big", "hidden-" + "shape-7919")  # this spec's (the families' cases are many)
    names = sorted({o.name for o in gc.get_objects() if type(o).__name__ == "Case" and o.name in ours})
    sys.stderr.write(f"FOUND cases={names}\\n")
    raise SystemExit(3)
''' + TWICE_KERNEL


def test_the_compile_check_runs_a_candidate_with_the_cases_it_checks_only(tmp_path):
    """`eval.compile_for` runs a correct candidate again on the job's cases (kgb.evaluate.crosscompile)."""
    spec = operators.load_spec(_spec(tmp_path))
    verdict = evaluate(KERNEL, spec, EvalSettings(device="cpu", case_tags=("smoke",), compile_for=90))
    assert "FOUND cases=['small']" in verdict.logs, verdict.logs[-2000:]
    assert HIDDEN not in verdict.logs


def test_no_module_a_spec_may_import_holds_the_hidden_cases():
    """The engine's processes import the spec libraries before they fork candidate processes
    (kgb.operators.import_spec_libraries): the families' case tables live in `*_cases` modules,
    which only a judge imports, when it loads a spec after forking its candidate process.
    Until session 43 the families held every hidden case of the 144 operators they build
    (ATen and cuBLAS) by name, most as `Case` objects. Words that any process of kgb's holds
    ("f32", "empty", "transposed") say nothing; beyond them a name may still be held where the
    libraries use it otherwise, but never most of an operator's."""
    from memory_scan import held, scan

    found = scan()
    assert found["case_modules"] == []
    assert found["hidden_cases"] == []
    words = scan(libraries=False)
    most = {op: f"{n} of {total}" for op, (n, total) in held(found, words=words).items()
            if total >= 6 and n > total / 3}
    assert most == {}, "these operators' hidden cases are held where candidates run: move them into a *_cases module"
