"""Kernels that Triton's CPU interpreter computed differently from a GPU (Triton 3.9), run
with kgb's corrections; prints one JSON line of findings for tests/test_interpreter.py."""

import json
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

if "--fixed" in sys.argv:
    from kgb.evaluate.interpreter import prepare_interpreter

    prepare_interpreter()


@triton.jit
def _mul(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) * tl.load(y + i, mask=m), mask=m)


@triton.jit
def _neg(x, o, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, -tl.load(x + i, mask=m), mask=m)


@triton.jit
def _add_eps(x, o, n, eps, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + eps.to(tl.float32), mask=m)


@triton.jit
def _cast(x, o, n, DT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m).to(DT.value), mask=m)


@triton.jit
def _to_bf16(x, o, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m).to(tl.bfloat16), mask=m)


@triton.jit
def _dot_default(a, b, c, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(a + i[:, None] * N + i[None, :])
    y = tl.load(b + i[:, None] * N + i[None, :])
    tl.store(c + i[:, None] * N + i[None, :], tl.dot(x, y))


def attempt(run):
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - the finding is the error
        return f"error: {type(exc).__name__}"


g = torch.Generator().manual_seed(0)
xb = torch.randn(64, generator=g).to(torch.bfloat16)
yb = torch.randn(64, generator=g).to(torch.bfloat16)
xf = torch.randn(64, generator=g)
ob, of = torch.empty_like(xb), torch.empty_like(xf)


def max_diff(out, ref):
    return float((out.float() - ref.float()).abs().max())


findings = {
    "bf16_mul": attempt(lambda: (_mul[(1,)](xb, yb, ob, 64, BLOCK=64), max_diff(ob, xb * yb))[1]),
    "bf16_neg": attempt(lambda: (_neg[(1,)](xb, ob, 64, BLOCK=64), max_diff(ob, -xb))[1]),
    "float_arg": attempt(lambda: (_add_eps[(1,)](xf, of, 64, 0.5, BLOCK=64), max_diff(of, xf + 0.5))[1]),
    "dtype_value": attempt(lambda: (_cast[(1,)](xf, of, 64, DT=tl.float32, BLOCK=64), max_diff(of, xf))[1]),
}
findings["f32_to_bf16"] = attempt(lambda: (_to_bf16[(1,)](xf, ob, 64, BLOCK=64), max_diff(ob, xf.to(torch.bfloat16)))[1])
a = torch.randn(16, 16, generator=g)
b = torch.randn(16, 16, generator=g)
c = torch.empty(16, 16)
findings["tf32_rel_err"] = attempt(lambda: (_dot_default[(1,)](a, b, c, N=16), max_diff(c, a @ b) / float((a @ b).abs().max()))[1])
print(json.dumps(findings))
