"""What an interpreted kernel may name (kgb/evaluate/kernel_calls.py): Triton's functions and
values, the builtins Triton's compiler accepts, and @triton.jit functions that keep to the same.

Run as a script (with TRITON_INTERPRET=1, as the tests below run it), this file launches each
kernel in the interpreter kgb prepares and prints what became of each launch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

SCALE = 2
SCALE_C = tl.constexpr(2)
Pair = namedtuple("Pair", "a b")
PAIR = Pair(1, 2)
TABLE = np.arange(4.0)
SIZES = [1, 2]


@triton.jit
def _twice(v):
    return v * 2


@triton.jit
def _relu(v):
    return tl.maximum(v, 0)


@triton.constexpr_function
def _log2(n):
    return n.bit_length() - 1


def _on_the_host(v):
    return v * 2


@triton.jit
def _calls_numpy(v):
    return np.exp(v)


@triton.jit
def honest(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr = _relu):
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n, other=0.0).to(getattr(tl, "float32"))  # noqa: B009 - read as an attribute
    for _ in tl.static_range(max(1, min(BLOCK, triton.cdiv(BLOCK, BLOCK)))):
        v = v + 0.0
    v = ACT(_twice(v)) * SCALE * SCALE_C + PAIR.a - PAIR[0] + _log2(BLOCK) - _log2(BLOCK)
    tl.store(y_ptr + i, tl.math.exp(v) - tl.exp(v) + v, mask=i < n)


@triton.jit
def numpy_by_module(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, np.exp(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def numpy_through_a_local(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    f = np.exp
    tl.store(x_ptr + i, f(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def numpy_through_getattr(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, getattr(np, "exp")(tl.load(x_ptr + i, mask=i < n)), mask=i < n)  # noqa: B009 - the point


@triton.jit
def numpy_in_a_helper(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, _calls_numpy(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def plain_helper(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, _on_the_host(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def the_handle(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n)
    v.handle.data[:] = 1.0
    tl.store(x_ptr + i, v, mask=i < n)


@triton.jit
def a_dunder(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n)
    tl.store(x_ptr + i, v.__class__(v.handle, v.type), mask=i < n)


@triton.jit
def a_computed_attribute(x_ptr, n, NAME: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n)
    tl.store(x_ptr + i, getattr(tl, NAME)(v), mask=i < n)


@triton.jit
def an_import(x_ptr, n, BLOCK: tl.constexpr):
    import numpy
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, numpy.exp(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def a_lambda(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, (lambda v: v * 2)(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def a_global_array(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) + TABLE[0], mask=i < n)


@triton.jit
def a_global_list(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) + SIZES[0], mask=i < n)


@triton.jit
def a_store_outside(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.stash = tl.load(x_ptr + i, mask=i < n)


@triton.jit
def a_tensor_at_compile_time(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, _log2(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


@triton.jit
def helper_by_global(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, HELPER(tl.load(x_ptr + i, mask=i < n)), mask=i < n)


HELPER = _twice


def _outcome(launch) -> str:
    try:
        launch()
    except Exception as exc:  # noqa: BLE001 - the outcome is what the test reads
        cause = exc if type(exc).__name__ == "NotTritonError" else (exc.__cause__ or exc)
        return f"{type(cause).__name__}: {str(cause).strip().splitlines()[-1]}"
    return "ran"


def _probe() -> dict[str, str]:
    global HELPER
    x, y = torch.randn(8), torch.empty(8)
    outcomes = {"honest": _outcome(lambda: honest[(1,)](x, y, 8, BLOCK=8))}
    expected = torch.relu(x * 2) * 4
    outcomes["honest_right"] = str(torch.allclose(y, expected, atol=1e-5))
    outcomes["honest_with_numpy_argument"] = _outcome(lambda: honest[(1,)](x, y, 8, BLOCK=8, ACT=np.exp))
    for kernel in (numpy_by_module, numpy_through_a_local, numpy_through_getattr, numpy_in_a_helper, plain_helper,
                   the_handle, a_dunder, an_import, a_lambda, a_global_array, a_global_list, a_store_outside,
                   a_tensor_at_compile_time):
        outcomes[kernel.__name__] = _outcome(lambda kernel=kernel: kernel[(1,)](x.clone(), 8, BLOCK=8))
    outcomes["a_computed_attribute"] = _outcome(lambda: a_computed_attribute[(1,)](x.clone(), 8, "exp", BLOCK=8))
    outcomes["helper_by_global"] = _outcome(lambda: helper_by_global[(1,)](x.clone(), 8, BLOCK=8))
    HELPER = _on_the_host  # rebound between launches: each launch looks its names up again
    outcomes["helper_rebound"] = _outcome(lambda: helper_by_global[(1,)](x.clone(), 8, BLOCK=8))
    return outcomes


@pytest.fixture(scope="module")
def outcomes() -> dict[str, str]:
    out = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=300, check=True,
                         cwd=Path(__file__).parent.parent, env={**os.environ, "TRITON_INTERPRET": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_honest_kernels_run(outcomes):
    assert outcomes["honest"] == "ran"
    assert outcomes["honest_right"] == "True"
    assert outcomes["helper_by_global"] == "ran"


@pytest.mark.parametrize("kernel, named", [
    ("numpy_by_module", "np.exp"), ("numpy_through_a_local", "np.exp"), ("numpy_through_getattr", "np.exp"),
    ("numpy_in_a_helper", "np.exp"), ("plain_helper", "_on_the_host"), ("helper_rebound", "HELPER"),
    ("honest_with_numpy_argument", "numpy.exp"),
])
def test_a_kernel_calling_what_is_not_triton_is_refused(outcomes, kernel, named):
    assert outcomes[kernel].startswith("NotTritonError"), outcomes[kernel]
    assert named in outcomes[kernel] and "not a Triton function" in outcomes[kernel], outcomes[kernel]


@pytest.mark.parametrize("kernel, why", [
    ("the_handle", "reads `.handle`"), ("a_dunder", "reads `.__class__`"), ("an_import", "an import"),
    ("a_lambda", "a lambda"), ("a_global_array", "not a Triton value"), ("a_global_list", "not a Triton value"),
    ("a_store_outside", "assigns to `tl.stash`"), ("a_computed_attribute", "not a constant"),
])
def test_a_kernel_reaching_around_the_check_is_refused(outcomes, kernel, why):
    assert outcomes[kernel].startswith("NotTritonError"), outcomes[kernel]
    assert why in outcomes[kernel], outcomes[kernel]


def test_a_constexpr_function_is_given_no_tensor(outcomes):
    """It runs at compile time on a GPU, where a tensor has no values."""
    assert outcomes["a_tensor_at_compile_time"].startswith("TensorAtCompileTime"), outcomes["a_tensor_at_compile_time"]


if __name__ == "__main__":
    from kgb.evaluate.interpreter import prepare_interpreter

    prepare_interpreter()
    print(json.dumps(_probe()))
