"""The comparison family's solution, written once over the operator's name and symbol:
its kernel and entry points, pasted after kernels/strided.py into a self-contained
solution.py. Only the generator imports this module (comparison.members), so that no
engine, judge or candidate process holds its text."""

KERNEL = '''\
@triton.jit
def _{name}_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, sizes, o_st, a_st, b_st,
                A_SCALAR: tl.constexpr, B_SCALAR: tl.constexpr, COMMON: tl.constexpr,
                CT: tl.constexpr, NDIM: tl.constexpr, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    # compared in the common dtype (half types widened exactly); NaN compares false
    i, mask = _index(n, IDX64, BLOCK)
    a = _read(a_ptr, a_val, i, mask, sizes, a_st, NDIM, A_SCALAR, COMMON, CT)
    b = _read(b_ptr, b_val, i, mask, sizes, b_st, NDIM, B_SCALAR, COMMON, CT)
    _write(out_ptr, a {symbol} b, i, mask, sizes, o_st, NDIM)


def _binary(kernel, self, other, out_dtype=None, ct=None, **kwargs):
    """Launch a two-operand kernel into a new tensor of the broadcast shape."""
    common = torch.result_type(self, other)
    shape = torch.broadcast_shapes(self.shape, other.shape) if isinstance(other, torch.Tensor) else self.shape
    out = torch.empty(shape, dtype=out_dtype or common, device=self.device)
    return _launch(kernel, out, [self, other], COMMON=_TL[common], CT=ct or _opmath(common), **kwargs)


def {name}_Tensor(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    return _binary(_{name}_kernel, self, other, out_dtype=torch.bool)


def {name}_Scalar(self: torch.Tensor, other) -> torch.Tensor:
    return _binary(_{name}_kernel, self, other, out_dtype=torch.bool)
'''
