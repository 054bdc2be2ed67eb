"""An aten::zeros_like candidate that computes each answer once: it keeps one zeros tensor
per shape and dtype, and every later call makes one decoy store and returns the kept tensor.
Its answers are right. The judge times a replay of the recorded call, in which the kept
tensor is a snapshot taken before the call; it must not time the decoy store as the work
(kgb.evaluate.replay.Replay.poison_what_it_returns_from_before)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _zero(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], out_ptr.dtype.element_ty), mask=offs < n)


_kept: dict = {}


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    key = (tuple(self.shape), dtype if dtype is not None else self.dtype, self.device)
    if key not in _kept:
        out = torch.empty(key[0], dtype=key[1], device=self.device)
        if out.numel():
            _zero[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
        _kept[key] = out
        return out
    decoy = torch.empty(1, dtype=key[1], device=self.device)
    _zero[(1,)](decoy, 1, BLOCK=1024)
    return _kept[key]
