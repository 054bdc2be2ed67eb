"""The trigonometric family's solution (trigonometric.py): one flat kernel calling Triton's
own `tl.cos`/`tl.sin` on float32, written once for both members.

Only the generator imports this module (trigonometric.members): the engines that judge
import every module a spec may import, and a candidate forked from one could read the text
here."""

from __future__ import annotations

from kgb.aten_families.source import solution

SOLUTION = '''\
BLOCK = 1024


@triton.jit
def _{name}_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.float32)
    y = tl.{name}(x)  # accurate (libdevice-grade) sin/cos on NVIDIA, with full range reduction
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def {name}(self: torch.Tensor) -> torch.Tensor:
    # integer and bool inputs give float32, as in PyTorch
    out_dtype = self.dtype if self.is_floating_point() else torch.float32
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    x = self.contiguous()
    if x.dtype == torch.bool:
        x = x.view(torch.uint8)  # read bool as bytes 0/1
    _{name}_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return out
'''


def solution_of(name: str) -> str:
    """The member's self-contained solution.py text (less the generated header)."""
    return solution([], SOLUTION.format(name=name))
