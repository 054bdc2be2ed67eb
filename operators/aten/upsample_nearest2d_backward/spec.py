"""Gradient of 2-D nearest-neighbour upsampling: `aten::upsample_nearest2d_backward`.

The forward pass maps an (N, C, IH, IW) input to an (N, C, OH, OW) output by copying, for
every output position (oh, ow), the input at (src_h(oh), src_w(ow)). This op receives
grad_output (N, C, OH, OW) and returns grad_input (N, C, IH, IW):
  grad_input[n, c, ih, iw] = sum of grad_output[n, c, oh, ow] over src_h(oh) == ih and
  src_w(ow) == iw (0 when no output position maps there, as when downsampling).
The source index, per dimension (ATen's formula, in float32 arithmetic):
- if out == in: src(o) = o;  if out == 2 * in: src(o) = o // 2;
- else r = float32(1.0 / scale) when the scale (scales_h / scales_w) is given and > 0,
  else r = float32(in) / float32(out); src(o) = min(floor(float32(o) * r), in - 1).
`output_size` is [OH, OW] and `input_size` is [N, C, IH, IW]. The cases only use sizes
where this mapping is unambiguous (the same on every device). grad_output is float32,
float16 or bfloat16, possibly non-contiguous (channels-last); accumulate half precision
in float32. The result has grad_output's dtype and is a new tensor; grad_output must not
be modified. N = 0 gives an empty result.

Required overload: `upsample_nearest2d_backward` (default). Left out: the
`.grad_input` out= variant.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def upsample_nearest2d_backward(grad_output: torch.Tensor, output_size: list[int], input_size: list[int], scales_h: float | None = None, scales_w: float | None = None) -> torch.Tensor:
    """aten::upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
'''


def _case(name, tag, input_size, output_size, scales=(None, None), dtype="float32", channels_last=False, seed=0):
    # reduction: the most output positions that feed one input element
    rh = -(-output_size[0] // input_size[2]) + (1 if output_size[0] % input_size[2] else 0)
    rw = -(-output_size[1] // input_size[3]) + (1 if output_size[1] % input_size[3] else 0)
    params = dict(input_size=input_size, output_size=output_size, scales=scales, dtype=dtype,
                  channels_last=channels_last)
    return Case(name, tag, params, seed=seed, reduction=rh * rw)


CASES = [
    _case("smoke-2x-f32", "smoke", (1, 2, 4, 5), (8, 10)),
    _case("smoke-odd-f16", "smoke", (2, 1, 3, 3), (7, 5), dtype="float16", seed=1),
    _case("unet-2x-f16", "check", (2, 64, 32, 32), (64, 64), dtype="float16"),
    _case("3x-bf16", "check", (2, 8, 10, 7), (30, 21), scales=(3.0, 3.0), dtype="bfloat16"),
    _case("fractional", "check", (3, 4, 13, 17), (30, 40)),
    _case("downsample", "check", (2, 3, 20, 9), (7, 6)),
    _case("given-scales", "check", (1, 5, 5, 32), (12, 48), scales=(2.5, 1.5)),
    _case("identity-w", "check", (2, 3, 6, 5), (9, 5)),
    _case("channels-last", "check", (2, 16, 16, 16), (32, 32), channels_last=True),
    _case("empty-batch", "check", (0, 3, 4, 4), (8, 8)),
    _case("bench-unet-f16", "bench", (16, 256, 128, 128), (256, 256), dtype="float16"),
    _case("bench-fpn-f32", "bench", (8, 256, 100, 152), (200, 304)),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    n, c = p["input_size"][:2]
    oh, ow = p["output_size"]
    g = torch.randn((n, c, oh, ow), generator=gen).to(getattr(torch, p["dtype"])).to(device)
    if p["channels_last"]:
        g = g.contiguous(memory_format=torch.channels_last)
    return dict(grad_output=g, output_size=list(p["output_size"]), input_size=list(p["input_size"]),
                scales_h=p["scales"][0], scales_w=p["scales"][1])


def reference(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    return torch.ops.aten.upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h, scales_w)
