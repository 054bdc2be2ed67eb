"""benchmarks/fresh_draws.py: the judge's last check of a timed case, on many fresh draws of one
case, in the interpreter here (a smoke case): a known-good solution passes every draw, a kernel
that is wrong on some inputs is caught on the draws where it is, and the seed is printed."""

from __future__ import annotations

import os
import subprocess
import sys

from kgb import operators
from kgb.operators import REPO_ROOT


def _fresh_draws(*args: str) -> subprocess.CompletedProcess:
    """Run as a user does: a process of its own, whose interpreter setting stays there."""
    return subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "fresh_draws.py"), *args],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "TRITON_INTERPRET": "1"})


def _smoke(op: str) -> str:
    return next(c.name for c in operators.load(op).cases if c.tag == operators.CaseTag.SMOKE)


def test_a_known_good_solution_passes_every_fresh_draw():
    done = _fresh_draws("aten::neg", "--case", _smoke("aten::neg"), "--draws", "4", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    assert f"| {_smoke('aten::neg')} | 4 | 0 |" in done.stdout


def test_on_the_cpu_the_interpreter_is_the_candidate_processs_own():
    """Without kgb's fixes to Triton's interpreter (bf16 arithmetic and casts), a bf16 known-good
    solution read garbage on every draw here (vllm::hadacore_transform, 192 of 192 elements off),
    where the judge passes it: the tool drew failures the judge never sees."""
    done = _fresh_draws("vllm::hadacore_transform", "--tag", "smoke", "--draws", "3", "--device", "cpu")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| smoke-n64-bf16-copy | 3 | 0 |" in done.stdout


def test_a_kernel_wrong_where_an_input_is_large_fails_the_draws_that_have_one(tmp_path):
    solution = operators.load("aten::neg").solution_path.read_text()
    wrong = tmp_path / "neg_wrong.py"
    # right where every input is small, wrong on a draw holding one over 2.5 (most smoke draws do)
    wrong.write_text(solution + """

_right = neg


def neg(self):
    out = _right(self)
    if self.is_floating_point() and bool((self.abs() > 2.5).any()):
        out.view(-1)[0] += 1.0
    return out
""")
    done = _fresh_draws("aten::neg", "--case", _smoke("aten::neg"), "--draws", "4", "--device", "cpu",
                        "--solution", str(wrong))
    assert done.returncode == 1, done.stderr
    assert "    seed " in done.stdout and "elements outside tolerance" in done.stdout
