"""The subtraction family's solution (subtraction.py): one a + alpha * b kernel over the
strided launch (kernels/strided.py), which both members call with their operands in the
order their formula takes them.

Only the generator imports this module (subtraction.members): the engines that judge import
every module a spec may import, and a candidate forked from one could read the text here."""

from __future__ import annotations

from kgb.aten_families.source import solution

KERNEL = '''\
@triton.jit
def _axpy_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, sizes, o_st, a_st, b_st, alpha,
                 A_SCALAR: tl.constexpr, B_SCALAR: tl.constexpr, COMMON: tl.constexpr,
                 CT: tl.constexpr, NDIM: tl.constexpr, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    # out = a + alpha * b, computed in CT and rounded once to out's dtype
    i, mask = _index(n, IDX64, BLOCK)
    a = _read(a_ptr, a_val, i, mask, sizes, a_st, NDIM, A_SCALAR, COMMON, CT)
    b = _read(b_ptr, b_val, i, mask, sizes, b_st, NDIM, B_SCALAR, COMMON, CT)
    _write(out_ptr, a + tl.cast(alpha, CT) * b, i, mask, sizes, o_st, NDIM)


def _axpy(a, b, alpha, like):
    """a + alpha * b into a new tensor (a or b may be a Python number; `like` is a tensor)."""
    common = torch.result_type(a, b) if isinstance(a, torch.Tensor) else torch.result_type(b, a)
    ct = _opmath(common)
    alpha = float(alpha) if ct.is_floating() else int(alpha)
    shapes = [t.shape for t in (a, b) if isinstance(t, torch.Tensor)]
    out = torch.empty(torch.broadcast_shapes(*shapes), dtype=common, device=like.device)
    return _launch(_axpy_kernel, out, [a, b], alpha=alpha, COMMON=_TL[common], CT=ct)
'''

ENTRIES = '''\
def {name}_Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha=1) -> torch.Tensor:
    return _axpy({operands}, -alpha, self)


def {name}_Scalar(self: torch.Tensor, other, alpha=1) -> torch.Tensor:
    return _axpy({operands}, -alpha, self)
'''

# name -> the kernel's (a, b) in out = a + (-alpha) * b
OPERANDS = {"sub": "self, other", "rsub": "other, self"}


def solution_of(name: str) -> str:
    """The member's self-contained solution.py text (less the generated header)."""
    return solution(["strided"], KERNEL + "\n\n" + ENTRIES.format(name=name, operands=OPERANDS[name]))
