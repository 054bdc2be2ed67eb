"""The launch of the pointwise family's solutions into a new tensor, after the strided
launch (strided.py): the broadcast shape, the result dtype and the compute type."""

import torch

from kgb.aten_families.kernels.strided import _TL, _launch, _opmath


def _pointwise(kernel, operands, common, out_dtype=None, ct=None, **kwargs):
    """Run `kernel` into a new tensor of the operands' broadcast shape. Operands (tensors or
    Python numbers) are read in `common` and computed in `ct`, by default common's opmath
    type (float32 for half types); the result has `out_dtype`, by default `common`."""
    tensors = [t for t in operands if isinstance(t, torch.Tensor)]
    shape = torch.broadcast_shapes(*[t.shape for t in tensors])
    out = torch.empty(shape, dtype=out_dtype or common, device=tensors[0].device)
    return _launch(kernel, out, operands, COMMON=_TL[common], CT=ct or _opmath(common), **kwargs)
