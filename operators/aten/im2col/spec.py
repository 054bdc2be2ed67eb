"""Unfold sliding image patches into columns: `aten::im2col` (what nn.Unfold computes).

`self` is (N, C, H, W) or unbatched (C, H, W). With kernel (kh, kw), dilation (dh, dw),
padding (ph, pw) and stride (sh, sw) (all pairs of ints, padding >= 0, the rest >= 1):
  OH = (H + 2*ph - (dh*(kh-1) + 1)) // sh + 1, and OW likewise (both >= 1 in the cases),
and the result is (N, C*kh*kw, OH*OW) (or (C*kh*kw, OH*OW) unbatched) with
  out[n, (c*kh + i)*kw + j, oh*OW + ow] = self[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw],
or 0 where that position falls in the zero padding outside the image.
`self` is float32, float16 or bfloat16, possibly non-contiguous (channels-last, for
example) or with N = 0 (an empty result). The result is a new tensor; `self` must not be
modified. This is pure data movement: PyTorch's copy ops (`copy_`, `clone`,
`contiguous`) are not allowed; the data must be moved by Triton kernels.

Required overload: `im2col` (default). Left out: `im2col.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def im2col(self: torch.Tensor, kernel_size: list[int], dilation: list[int], padding: list[int], stride: list[int]) -> torch.Tensor:
    """aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor"""
'''

DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::im2col")


def _case(name, tag, shape, kernel, dilation=(1, 1), padding=(0, 0), stride=(1, 1), dtype="float32",
          channels_last=False, seed=0):
    params = dict(shape=shape, kernel=kernel, dilation=dilation, padding=padding, stride=stride, dtype=dtype,
                  channels_last=channels_last)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-3x3-pad", "smoke", (1, 2, 5, 6), (3, 3), padding=(1, 1)),
    _case("smoke-unbatched-f16", "smoke", (3, 7, 5), (2, 3), stride=(2, 1), dtype="float16", seed=1),
    _case("conv3x3-f32", "check", (2, 16, 28, 28), (3, 3), padding=(1, 1)),
    _case("patchify-bf16", "check", (2, 3, 64, 64), (16, 16), stride=(16, 16), dtype="bfloat16"),
    _case("dilated", "check", (1, 4, 17, 19), (3, 2), dilation=(2, 3), padding=(2, 1)),
    _case("strided-odd", "check", (3, 5, 13, 11), (5, 3), padding=(2, 0), stride=(3, 2), dtype="float16"),
    _case("rect-pad-only", "check", (1, 2, 2, 3), (3, 3), padding=(2, 2)),
    _case("channels-last", "check", (2, 8, 15, 15), (3, 3), padding=(1, 1), channels_last=True),
    _case("empty-batch", "check", (0, 3, 8, 8), (3, 3)),
    _case("bench-conv3x3-f16", "bench", (32, 64, 112, 112), (3, 3), padding=(1, 1), dtype="float16"),
    _case("bench-patchify-bf16", "bench", (256, 3, 224, 224), (16, 16), stride=(16, 16), dtype="bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    x = torch.randn(tuple(p["shape"]), generator=gen).to(getattr(torch, p["dtype"])).to(device)
    if p["channels_last"]:
        x = x.contiguous(memory_format=torch.channels_last)
    return dict(self=x, kernel_size=list(p["kernel"]), dilation=list(p["dilation"]),
                padding=list(p["padding"]), stride=list(p["stride"]))


def reference(self, kernel_size, dilation, padding, stride):
    return torch.ops.aten.im2col(self, kernel_size, dilation, padding, stride)
