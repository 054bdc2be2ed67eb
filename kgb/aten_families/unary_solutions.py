"""The unary family's solutions (unary.py): after the flat launch of kernels/unary.py and a
member's kernel files, most members' `_<name>(x)` goes into the float template here;
members with their own entry point are their kernel files alone.

Only the generator imports this module (unary.members): the engines that judge import
every module a spec may import, and a candidate forked from one could read the text here."""

from __future__ import annotations

from textwrap import indent

from kgb.aten_families.source import kernel_body, solution
from kgb.aten_families.unary_ops import Unary

# Each member's `_<name>(x)` on float32 x, for the float template, where it is not a kernel file of its own
MATH = {
    "cosh": """\
# cosh = h + 1 / (4 h) with h = e^|x| / 2; beyond 89.42 the result is +inf anyway
a = tl.abs(x)
half = _exp_scaled(tl.where(a > 90.0, 90.0, a), 1.0, -1)
return half + 0.25 / half""",
    "hardsigmoid": """\
t = x + 3.0
# clamps written with where: a NaN fails both tests and passes through
t = tl.where(t < 0.0, 0.0, t)
t = tl.where(t > 6.0, 6.0, t)
return t / 6.0""",
    "log10": """\
inv_ln10 = 0.43429448190325176  # 1 / ln(10), a local: kernels may not read plain globals
return tl.log(x) * inv_ln10  # log(0) = -inf, log(x < 0) = NaN carry over""",
    "mish": """\
# tanh(softplus(x)) = p / (p + 2) with p = e (e + 2), e = exp(x): no cancellation, and
# about e for very negative x. Beyond x = 20 the factor is 1 in float32 (and p would
# overflow), so the result is x itself.
e = tl.exp(tl.where(x > 20.0, 0.0, x))
p = e * (e + 2.0)
return tl.where(x > 20.0, x, x * (p / (p + 2.0)))""",
    "rsqrt": "return tl.rsqrt(x)",
    "silu": """\
# exp(-x) = inf for x < -88.7 gives x / inf = -0, the limit
return x / (1.0 + tl.exp(-x))""",
    "special_entr": """\
y = -x * tl.log(x)
y = tl.where(x == 0.0, 0.0, y)
return tl.where(x < 0.0, float("-inf"), y)  # NaN falls through every test and stays NaN""",
}

FLOAT_MATH = '''\
@triton.jit
def _{name}(x):
{body}
'''

FLOAT_ENTRY = '''\
@triton.jit
def _{name}_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs, mask = _block(n, BLOCK)
    x = tl.load(x_ptr + offs, mask=mask, other=1).to(tl.float32)
    tl.store(y_ptr + offs, _{name}(x).to(y_ptr.dtype.element_ty), mask=mask)


def {name}(self: torch.Tensor) -> torch.Tensor:
    return _launch(_{name}_kernel, self, _float_result(self))
'''


def solution_of(op: Unary) -> str:
    files = ["unary", *op.kernels]
    if op.own_entry:
        return solution(files[:-1], kernel_body(files[-1]), imports=op.imports)
    tail = FLOAT_ENTRY.format(name=op.name)
    if op.name in MATH:
        tail = FLOAT_MATH.format(name=op.name, body=indent(MATH[op.name].strip("\n"), "    ")) + "\n\n" + tail
    return solution(files, tail, imports=op.imports)
