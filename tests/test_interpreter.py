"""Each interpreter behaviour that differs from a GPU, before and after kgb's correction
(kgb/evaluate/interpreter.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).parent / "interpreter_probe.py"


def _probe(*flags: str) -> dict:
    out = subprocess.run([sys.executable, str(PROBE), *flags], capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).parent.parent, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def plain():
    return _probe()


@pytest.fixture(scope="module")
def fixed():
    return _probe("--fixed")


def test_bf16_multiply(plain, fixed):
    assert plain["bf16_mul"] == "error: InterpreterError" or plain["bf16_mul"] > 1.0  # integer bits multiplied
    assert fixed["bf16_mul"] == 0.0  # float32 product rounded to nearest even, as torch and a GPU do


def test_bf16_unary_minus(plain, fixed):
    assert isinstance(plain["bf16_neg"], str) or plain["bf16_neg"] > 1.0
    assert fixed["bf16_neg"] == 0.0


def test_float_argument_is_a_float32_scalar(plain, fixed):
    assert plain["float_arg"] == "error: InterpreterError"  # 'float' object has no attribute 'to'
    assert fixed["float_arg"] < 1e-6


def test_constexpr_dtype_has_value(plain, fixed):
    assert plain["dtype_value"] == "error: InterpreterError"
    assert fixed["dtype_value"] == 0.0


def test_default_dot_is_tf32(plain, fixed):
    assert plain["tf32_rel_err"] < 1e-6  # the interpreter multiplies in full float32
    assert 1e-5 < fixed["tf32_rel_err"] < 1e-2  # a GPU's TF32 default loses ~3 decimal digits


def test_float32_to_bfloat16_rounds_to_nearest(plain, fixed):
    assert plain["f32_to_bf16"] > 0.0  # truncated
    assert fixed["f32_to_bf16"] == 0.0  # as torch's .to(torch.bfloat16) and a GPU round


_IMPORTED_FIRST = """
import os, sys
os.environ.pop("TRITON_INTERPRET", None)
import torch, triton, triton.language as tl  # compiled mode: tl.zeros is a JITFunction
from kgb.evaluate.interpreter import prepare_interpreter
prepare_interpreter()

@triton.jit
def fill(out, n: tl.constexpr):
    tl.store(out + tl.arange(0, n), tl.zeros([n], tl.float32) + 3.0)

out = torch.empty(8)
fill[(1,)](out, 8)
print(out.tolist())
"""


def test_a_process_that_imported_triton_before_the_interpreter_was_named_interprets_its_helpers(tmp_path):
    """A process that imported Triton with TRITON_INTERPRET unset (a test's worker) forks
    candidates that run in the interpreter: Triton's own @jit helpers must be interpreted too."""
    (tmp_path / "imported_first.py").write_text(_IMPORTED_FIRST)  # a kernel's source is read from its file
    out = subprocess.run([sys.executable, str(tmp_path / "imported_first.py")], capture_output=True, text=True,
                         timeout=300, cwd=Path(__file__).parent.parent,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == str([3.0] * 8)
