"""Copy values into an existing tensor, in place: `aten::copy_` (default overload).

Writes src's values into `self` and returns `self` itself (the same tensor object).
- `src` broadcasts to self's shape (e.g. a row copied into every row, a 0-d tensor into
  every element); self's shape never changes.
- dtypes may differ: each value is converted to self's dtype as C casts do in ATen:
  float to integer truncates toward zero (the cases stay in range and avoid NaN/inf),
  to bool is `x != 0`, bool is 0/1, integers and float64 go to float16/bfloat16 through
  float32 (round to nearest even at each step).
- `self` may be any non-overlapping strided view (transposed, channels-last, a slice with
  gaps): only the elements it views are written. `src` may be any strided view too; it
  lives on self's device (cross-device copies are not part of this task) and does not
  overlap self. `non_blocking` changes nothing here. Dtypes: float32, float16, bfloat16,
  float64, int64, int32, uint8, bool. 0-d and empty tensors are valid.
`src` must not be modified. The whole job is the copy, so PyTorch's copy ops (`copy_`,
`clone`, `contiguous`, `_to_copy`) are not allowed: the data must be moved by a Triton
kernel.

Required overload: `copy_` (default). Left out: `copy_.Tensor` (the same op under another
name), and `copy_.int` / `copy_.float` (TorchScript fills from a Python scalar).
"""

import torch

from kgb.evaluate.correctness import compare_values
from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)"""
'''

INOUT_ARGS = ("self",)
DENIED_TORCH_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")

# layouts: "plain", "t" (transposed matrix), "gaps" (every other column), "cl" (channels-last)


def _case(name, tag, shape, dst, src, src_shape=None, dst_layout="plain", src_layout="plain", seed=0):
    params = dict(shape=shape, dst=dst, src=src, src_shape=shape if src_shape is None else src_shape,
                  dst_layout=dst_layout, src_layout=src_layout)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (5, 7), "float32", "float32"),
    _case("smoke-row-into-t-f16", "smoke", (6, 3), "float16", "float32", src_shape=(3,), dst_layout="t", seed=1),
    _case("f32-into-bf16", "check", (4, 77, 768), "bfloat16", "float32"),
    _case("t-f16-into-f32", "check", (129, 65), "float32", "float16", src_layout="t"),
    _case("into-gaps", "check", (20, 30), "float32", "float32", dst_layout="gaps", src_layout="t"),
    _case("into-channels-last", "check", (2, 8, 5, 6), "float16", "float16", dst_layout="cl"),
    _case("from-channels-last", "check", (2, 8, 5, 6), "bfloat16", "float32", src_layout="cl"),
    _case("f32-into-i64", "check", (37, 41), "int64", "float32"),
    _case("i64-into-f32", "check", (37, 41), "float32", "int64"),
    _case("i32-into-bf16", "check", (100, 10), "bfloat16", "int32"),
    _case("f32-into-bool", "check", (64, 65), "bool", "float32"),
    _case("bool-into-f32", "check", (64, 65), "float32", "bool"),
    _case("i64-into-u8", "check", (3, 32, 32), "uint8", "int64"),
    _case("f32-into-f64", "check", (17, 19), "float64", "float32", src_layout="t"),
    _case("scalar-broadcast", "check", (33, 17), "float32", "float32", src_shape=()),
    _case("column-broadcast", "check", (33, 17), "float16", "float16", src_shape=(33, 1)),
    _case("zero-dim", "check", (), "float16", "float32"),
    _case("empty", "check", (0, 5), "float32", "float32"),
    _case("bench-bf16-into-f32", "bench", (8192, 8192), "float32", "bfloat16"),
    _case("bench-transpose-f32", "bench", (8192, 8192), "float32", "float32", src_layout="t"),
    _case("bench-into-cl-f16", "bench", (64, 256, 56, 56), "float16", "float16", dst_layout="cl"),
]


def _values(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        lo = 0 if dtype == "int64" else -100  # int64 sources also feed uint8 targets
        return torch.randint(lo, 100, shape, generator=gen, dtype=getattr(torch, dtype))
    if dtype == "uint8":
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    x = (torch.randn(shape, generator=gen, dtype=torch.float64) * 30).clamp(-120, 120)
    x[torch.rand(shape, generator=gen) < 0.1] = 0  # exact zeros matter for bool targets
    return x.to(getattr(torch, dtype))


def _tensor(shape, dtype, layout, gen, device):
    shape = tuple(shape)
    if layout == "t":
        return _values(shape[::-1], dtype, gen).to(device).t()
    if layout == "gaps":
        return _values((shape[0], 2 * shape[1]), dtype, gen).to(device)[:, ::2]
    x = _values(shape, dtype, gen).to(device)
    return x.contiguous(memory_format=torch.channels_last) if layout == "cl" else x


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dst = _tensor(p["shape"], p["dst"], p["dst_layout"], gen, device)
    src = _tensor(p["src_shape"], p["src"], p["src_layout"], gen, device)
    return dict(self=dst, src=src, non_blocking=False)


def reference(self, src, non_blocking=False):
    return torch.ops.aten.copy_(self, src, non_blocking)


def compare(actual, expected, case, inputs):
    ret, x = actual["return"], inputs["self"]
    if not (isinstance(ret, torch.Tensor) and ret.data_ptr() == x.data_ptr()
            and ret.shape == x.shape and ret.stride() == x.stride()):
        return "the return value must be self, updated in place"
    for key in ("self", "return"):
        message, _, _ = compare_values(key, actual[key], expected[key], case.reduction)
        if message:
            return message
    return None
