"""The solutions of the pointwise family (pointwise.py). Every member's kernel has one form
(KERNEL): read each operand through the strided launch (kernels/strided.py), compute `r`,
write it. A member gives its formula, the names it reads its operands under and its extra
arguments; its entry points check the arguments, pick the result and compute dtypes, and
launch through kernels/pointwise.py (masked_fill_ writes into `self` instead).

Only the generator imports this module (pointwise.members): the engines that judge import
every module a spec may import, and a candidate forked from one could read the text here."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from kgb.aten_families.source import KERNELS, solution


@dataclass(frozen=True)
class Kernel:
    name: str  # the kernel is `_{name}_kernel`
    reads: tuple[str, ...]  # what the operands (a, b, c in launch order) are called in `body`
    body: str  # computes `r` from them
    comment: str = ""
    scalars: tuple[str, ...] = ()  # arguments passed by value
    constexprs: tuple[str, ...] = ()


KERNEL = '''\
@triton.jit
def _{name}_kernel({params}):
{comment}    i, mask = _index(n, IDX64, BLOCK)
{reads}
{body}
    _write(out_ptr, r, i, mask, sizes, o_st, NDIM)
'''


def _wrap(head: str, params: list[str], width: int = 100) -> str:
    """`head(params):` over as many lines as it takes, continuation lines aligned."""
    lines, line = [], head
    for p in params:
        if len(line) + len(p) + 3 > width and line != head:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += p + ", "
    return "\n".join([*lines, line[:-2]])


def render(k: Kernel) -> str:
    letters = "abc"[: len(k.reads)]
    params = ["out_ptr", *[f"{x}_{s}" for x in letters for s in ("ptr", "val")], "n", "sizes", "o_st",
              *[f"{x}_st" for x in letters], *k.scalars]
    flags = [*[f"{x.upper()}_SCALAR" for x in letters], "COMMON", "CT", *k.constexprs, "NDIM", "IDX64", "BLOCK"]
    params += [f"{f}: tl.constexpr" for f in flags]
    head = f"def _{k.name}_kernel("
    signature = _wrap(head, params)[len(head):]
    reads = [f"    {v} = _read({x}_ptr, {x}_val, i, mask, sizes, {x}_st, NDIM, {x.upper()}_SCALAR, COMMON, CT)"
             for v, x in zip(k.reads, letters, strict=True)]
    comment = textwrap.indent(k.comment, "    # ") + "\n" if k.comment else ""
    return KERNEL.format(name=k.name, params=signature, comment=comment, reads="\n".join(reads),
                         body=textwrap.indent(textwrap.dedent(k.body).strip("\n"), "    "))


def functions(kernel_file: str, *names: str) -> str:
    """The named functions of kernels/<kernel_file>.py, decorators included."""
    text = (KERNELS / f"{kernel_file}.py").read_text()
    lines = text.splitlines()
    found = [node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and node.name in names]
    return "\n\n\n".join("\n".join(lines[node.decorator_list[0].lineno - 1 : node.end_lineno]) for node in found)


KERNELS_OF = {
    "fmax": [Kernel("fmax", ("a", "b"), """
        r = tl.maximum(a, b)
        if CT.is_floating():
            # a NaN loses to a number; only two NaNs give NaN
            r = tl.where(a != a, b, tl.where(b != b, a, r))
    """)],
    "heaviside": [Kernel("heaviside", ("x", "v"), "r = tl.where(x == 0, v, tl.where(x > 0, 1, 0).to(CT))",
                         "0 below zero, `values` at zero, 1 above; NaN is not > 0, so it gives 0")],
    "logaddexp2": [Kernel("logaddexp2", ("a", "b"), """
        m = tl.maximum(a, b)
        t = tl.exp2(-tl.abs(a - b))
        u = 1.0 + t
        # log2(1 + t) without losing a small t: log2(u) * t / (u - 1) is exact to rounding
        l1p = tl.where(u == 1.0, t * 1.4426950408889634, tl.log2(u) * (t / (u - 1.0)))
        r = m + l1p
        r = tl.where((a == b) & (tl.abs(a) == float("inf")), a, r)  # inf + inf, -inf + -inf
    """, "log2(2^a + 2^b) = max + log2(1 + 2^-|a - b|)")],
    "mul": [Kernel("mul", ("a", "b"), "r = a * b",
                   "bool operands are multiplied as int32 (logical and once written back as bool)")],
    "pow": [
        Kernel("pow", ("x", "y"), """
            if A_SCALAR:  # give the scalar operand the block's shape
                x = x + tl.zeros_like(y)
            if B_SCALAR:
                y = y + tl.zeros_like(x)
            if CT.is_floating():
                r = _pow_float(x, y)
            else:
                r = _pow_int(x, y, NBITS)
        """, constexprs=("NBITS",)),
        Kernel("square", ("x", "_"), """
            if EXP == 2.0:
                r = x * x
            elif EXP == 3.0:
                r = x * x * x
            elif EXP == 0.5:
                r = tl.math.sqrt_rn(x)
            elif EXP == -0.5:
                r = tl.math.div_rn(1.0, tl.math.sqrt_rn(x))
            elif EXP == -1.0:
                r = tl.math.div_rn(1.0, x)
            else:
                r = tl.math.div_rn(1.0, x * x)
        """, "the exponents PyTorch special-cases: 2, 3, 0.5, -0.5, -1, -2 (floats only)",
               constexprs=("EXP",)),
    ],
    "prelu": [Kernel("prelu", ("x", "w"), "r = tl.where(x > 0, x, w * x)",
                     "w is the weight viewed with self's shape (stride 0 except along the channel dim)")],
    "masked_fill_": [Kernel("masked_fill", ("keep", "v"), """
        mask = mask & (keep != 0)
        r = v
    """, "`keep` is the bool mask, `v` the fill value (a Python scalar or a 0-d tensor read with\n"
         "stride 0); only the masked elements of `out` (= self) are written")],
    "log_sigmoid_backward": [Kernel("log_sigmoid_backward", ("g", "x"), """
        z = tl.exp(-tl.abs(x))
        q = z / (1.0 + z)
        r = g * tl.where(x < 0, 1.0 - q, q)
    """, "d/dx log(sigmoid(x)) = sigmoid(-x), written with z = exp(-|x|) so it cannot overflow:\n"
         "x < 0: 1 - z / (1 + z);  x >= 0: z / (1 + z)")],
    "mish_backward": [Kernel("mish_backward", ("g", "x"), """
        s = 1.0 / (1.0 + tl.exp(-x))
        # tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1) = n / (n + 2) with n = e (e + 2);
        # it is 1 to float precision beyond x = 20, where n would overflow
        e = tl.exp(tl.minimum(x, 20.0))
        nn = e * (e + 2.0)
        t = tl.where(x > 20.0, 1.0, nn / (nn + 2.0))
        r = g * (t + x * s * (1.0 - t * t))
    """, "d/dx [x tanh(softplus(x))] = t + x * sigmoid(x) * (1 - t^2),  t = tanh(softplus(x))")],
    "softplus_backward": [Kernel("softplus_backward", ("g", "x"), """
        bx = x * tl.cast(beta, CT)
        z = tl.exp(bx)
        r = tl.where(bx > tl.cast(threshold, CT), g, g * z / (z + 1.0))
    """, "softplus is linear above the threshold, so its slope there is 1; else sigmoid(beta x)",
                                  scalars=("beta", "threshold"))],
    "rrelu_with_noise_backward": [Kernel("rrelu_backward", ("a", "b"), """
        if TRAINING:
            r = a * b
        else:
            r = tl.where(b > 0, a, a * tl.cast(negval, CT))
    """, "training: a = noise, b = grad_output, out = noise * grad (the slopes drawn by the forward)\n"
         "eval:     a = grad_output, b = self, out = leaky-ReLU gradient with the mean slope",
                                          scalars=("negval",), constexprs=("TRAINING",))],
    "smooth_l1_loss_backward": [Kernel("smooth_l1_backward", ("g", "x", "t"), """
        nv = _round_to(tl.cast(norm, CT), COMMON)
        bv = _round_to(tl.cast(beta, CT), COMMON)
        d = _round_to(x - t, COMMON)
        lo = _round_to(-nv * g, COMMON)
        hi = _round_to(nv * g, COMMON)
        mid = _round_to(_round_to(nv * d, COMMON) * g, COMMON)
        mid = _round_to(_fdiv(mid, bv), COMMON)
        r = tl.where(d < -bv, lo, tl.where(d > bv, hi, mid))
    """, "PyTorch's GPU kernel works in the common dtype itself, so for half types every\n"
         "difference, product and quotient is rounded to it.",
                                        scalars=("norm", "beta"))],
}

ENTRIES = {
    "fmax": '''\
def fmax(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    return _pointwise(_fmax_kernel, [self, other], torch.result_type(self, other))
''',
    "heaviside": '''\
def heaviside(self: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _pointwise(_heaviside_kernel, [self, values], self.dtype)
''',
    "logaddexp2": '''\
def logaddexp2(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    common = torch.result_type(self, other)
    if not common.is_floating_point:
        raise RuntimeError(f'"logaddexp2" not implemented for {common}')
    return _pointwise(_logaddexp2_kernel, [self, other], common)
''',
    "mul": '''\
def mul_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    return _pointwise(_mul_kernel, [self, other], torch.result_type(self, other))


def mul_Scalar(self: torch.Tensor, other) -> torch.Tensor:
    return _pointwise(_mul_kernel, [self, other], torch.result_type(self, other))
''',
    "pow": '''\
def _pow(base, exponent):
    common = torch.result_type(base, exponent)
    if common == torch.bool:
        raise RuntimeError('"pow" not implemented for \\'Bool\\'')
    if common.is_floating_point:
        if not isinstance(exponent, torch.Tensor) and float(exponent) in (2.0, 3.0, 0.5, -0.5, -1.0, -2.0):
            return _pointwise(_square_kernel, [base, exponent], common, EXP=float(exponent))
        # float32 data goes through float64 for accuracy; half types through float32
        ct = tl.float32 if common in (torch.float16, torch.bfloat16) else tl.float64
        return _pointwise(_pow_kernel, [base, exponent], common, ct=ct, NBITS=0)
    if not isinstance(exponent, torch.Tensor) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return _pointwise(_pow_kernel, [base, exponent], common, NBITS=8 * common.itemsize - 1)


def pow_Tensor_Tensor(self: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    return _pow(self, exponent)


def pow_Tensor_Scalar(self: torch.Tensor, exponent) -> torch.Tensor:
    return _pow(self, exponent)


def pow_Scalar(self, exponent: torch.Tensor) -> torch.Tensor:
    return _pow(self, exponent)
''',
    "prelu": '''\
def prelu(self: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if self.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {self.dtype} and {weight.dtype}")
    channels = self.shape[1] if self.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size.")
    if weight.numel() == 1:
        w = weight.reshape(())
    else:  # one weight per channel, channel = dim 1
        strides = [0] * self.dim()
        strides[1] = weight.stride(0)
        w = weight.as_strided(self.shape, strides)
    return _pointwise(_prelu_kernel, [self, w], self.dtype)
''',
    "masked_fill_": '''\
def _masked_fill_(self, mask, value):
    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor")
    if isinstance(value, torch.Tensor) and value.device != self.device:
        raise RuntimeError("the value tensor must be on the same device as self")
    dt = _TL[self.dtype]
    return _launch(_masked_fill_kernel, self, [mask, value], COMMON=dt, CT=dt)


def masked_fill__Scalar(self: torch.Tensor, mask: torch.Tensor, value) -> torch.Tensor:
    return _masked_fill_(self, mask, value)


def masked_fill__Tensor(self: torch.Tensor, mask: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    return _masked_fill_(self, mask, value)
''',
    "log_sigmoid_backward": '''\
def log_sigmoid_backward(grad_output: torch.Tensor, self: torch.Tensor, buffer: torch.Tensor) -> torch.Tensor:
    # `buffer` (exp(-|x|) from the forward on CPU, empty on CUDA) is recomputed instead
    common = torch.result_type(grad_output, self)
    return _pointwise(_log_sigmoid_backward_kernel, [grad_output, self], common)
''',
    "mish_backward": '''\
def mish_backward(grad_output: torch.Tensor, self: torch.Tensor) -> torch.Tensor:
    return _pointwise(_mish_backward_kernel, [grad_output, self], torch.result_type(grad_output, self))
''',
    "softplus_backward": '''\
def softplus_backward(grad_output: torch.Tensor, self: torch.Tensor, beta, threshold) -> torch.Tensor:
    return _pointwise(_softplus_backward_kernel, [grad_output, self], torch.result_type(grad_output, self),
                      beta=float(beta), threshold=float(threshold))
''',
    "rrelu_with_noise_backward": '''\
def rrelu_with_noise_backward(grad_output: torch.Tensor, self: torch.Tensor, noise: torch.Tensor,
                              lower, upper, training: bool, self_is_result: bool) -> torch.Tensor:
    negval = (float(lower) + float(upper)) / 2
    if training:
        operands = [noise, grad_output]
    else:
        if self_is_result and negval < 0:
            raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not supported.")
        operands = [grad_output, self]
    return _pointwise(_rrelu_backward_kernel, operands, torch.result_type(*operands), negval=negval,
                      TRAINING=bool(training))
''',
    "smooth_l1_loss_backward": '''\
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def smooth_l1_loss_backward(grad_output: torch.Tensor, self: torch.Tensor, target: torch.Tensor,
                            reduction: int, beta: float) -> torch.Tensor:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    operands = [grad_output, self, target]
    # PyTorch's promotion of floating tensors: the dimensioned ones decide (all, if none is)
    dtypes = [t.dtype for t in operands if t.dim() > 0] or [t.dtype for t in operands]
    common = dtypes[0]
    for dtype in dtypes[1:]:
        common = torch.promote_types(common, dtype)
    norm = 1.0 / self.numel() if reduction == 1 and self.numel() else 1.0
    return _pointwise(_smooth_l1_backward_kernel, operands, common, out_dtype=self.dtype, norm=norm,
                      beta=float(beta))
''',
}


def solution_of(name: str) -> str:
    """The member's self-contained solution.py text (less the generated header)."""
    files = ["strided"] if name == "masked_fill_" else ["strided", "pointwise"]
    helpers = []
    if name == "pow":
        files.append("pow")
    if name == "smooth_l1_loss_backward":
        helpers.append(functions("division", "_fdiv", "_round_to"))
    tail = [*helpers, *[render(k) for k in KERNELS_OF[name]], ENTRIES[name]]
    return solution(files, "\n\n".join(part.strip("\n") + "\n" for part in tail))
