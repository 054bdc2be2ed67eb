"""Materialise a lazy conjugation: `aten::resolve_conj` (default overload).

PyTorch can conjugate a complex tensor lazily: `z.conj()` returns a view of the same
memory with a "conjugate bit" set, and readers apply the conjugation on the fly.
resolve_conj(self) returns a tensor without that bit:

- If `self.is_conj()` is False (every real, integer or bool tensor, and complex tensors
  without the bit), the result is `self` itself: the same tensor, sharing its memory, no
  copy and no kernel. This is the common case in real-valued models.
- If `self.is_conj()` is True, the result is a new complex tensor of the same shape with
  `is_conj()` False whose values are the (logical) values of `self`: the memory of `self`
  holds x and the result holds conj(x) = (re, -im). It must not share memory with `self`,
  and `self` must not be modified. Any strides are fine for the result.

The values must be computed by a Triton kernel (PyTorch's clone, copy_ and contiguous,
which would resolve the bit themselves, are not allowed). Triton has no complex dtype and
knows nothing of the conjugate bit: a tensor's data pointer gives the memory as stored.
`torch.view_as_real(self.conj())` (both views, allowed here) gives that memory as float32
pairs without the bit. `self` may be 0-d, empty, or non-contiguous (transposed, sliced).
Because the no-bit case launches no kernel, this operator does not require one.

Dtypes: complex64 with or without the bit; float16, bfloat16, float32, int64 and bool
(never conjugated) are returned as they are. complex128 is not required.

Required entry point: `resolve_conj` (aten::resolve_conj(Tensor(a) self) -> Tensor(a)).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def resolve_conj(self: torch.Tensor) -> torch.Tensor:
    """aten::resolve_conj(Tensor(a) self) -> Tensor(a)"""
'''

# The no-bit case is a pure alias and computes nothing.
KERNEL_REQUIRED = False
# These would resolve the bit without Triton; these views reach the stored memory.
DENIED_TORCH_OPS = ("aten::clone", "aten::copy_", "aten::contiguous")
ALLOWED_TORCH_OPS = ("aten::_conj", "aten::view_as_real")

# The evaluator cannot pass a tensor with the conjugate bit set: it copies every input with
# kgb.evaluate.correctness.clone_exact, which drops the bit, and its check that inputs are
# left untouched then compares conj(x) with x. The cases of CONJ_CASES (materialising path)
# are therefore kept out of CASES until the evaluator keeps the bit (Tensor._set_conj).


def _case(name, tag, shape, dtype="complex64", layout="contiguous", conj=False):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, conj=conj))


CONJ_CASES = [
    _case("smoke-complex64-conj", "smoke", [5, 17], conj=True),
    _case("complex64-conj", "check", [1000, 129], conj=True),
    _case("complex64-conj-transposed", "check", [257, 65], layout="transposed", conj=True),
    _case("complex64-conj-strided", "check", [33, 100], layout="strided", conj=True),
    _case("complex64-conj-scalar", "check", [], conj=True),
    _case("complex64-conj-empty", "check", [0, 5], conj=True),
    _case("bench-complex64-conj", "bench", [4096, 4096], conj=True),
]

CASES = [
    _case("smoke-f32", "smoke", [7, 33], "float32"),
    _case("smoke-complex64", "smoke", [5, 17]),
    _case("complex64", "check", [64, 1000]),
    _case("complex64-transposed", "check", [257, 65], layout="transposed"),
    _case("f32-hidden", "check", [8, 128, 768], "float32"),
    _case("f16-transposed", "check", [300, 257], "float16", layout="transposed"),
    _case("bf16", "check", [3, 100, 129], "bfloat16"),
    _case("int64", "check", [1000, 37], "int64"),
    _case("bool", "check", [129, 7], "bool"),
    _case("scalar-f32", "check", [], "float32"),
    _case("empty-f32", "check", [0, 16], "float32"),
    _case("bench-complex64", "bench", [4096, 4096]),
    _case("bench-f32", "bench", [8192, 8192], "float32"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = list(p["shape"]), p["layout"]
    base = list(shape)
    if layout == "transposed":
        base[-2], base[-1] = shape[-1], shape[-2]
    elif layout == "strided":
        base[-1] = 2 * shape[-1]
    dtype = getattr(torch, p["dtype"])
    if dtype == torch.complex64:
        x = torch.complex(torch.randn(base, generator=gen), torch.randn(base, generator=gen))
    elif dtype == torch.bool:
        x = torch.randint(0, 2, base, generator=gen).to(torch.bool)
    elif dtype == torch.int64:
        x = torch.randint(-1000, 1000, base, generator=gen)
    else:
        x = torch.randn(base, generator=gen).to(dtype)
    x = x.to(device)
    if layout == "transposed":
        x = x.transpose(-2, -1)
    elif layout == "strided":
        x = x[..., ::2]
    if p["conj"]:
        x = x.conj()  # a lazy view: the memory is untouched, the bit is set
    return dict(self=x)


def reference(self):
    return torch.ops.aten.resolve_conj.default(self)


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.resolve_conj().to(b.device), b.resolve_conj()
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())


def compare(actual: dict, expected: dict, case: Case, inputs: dict) -> str | None:
    out, ref, x = actual["return"], expected["return"], inputs["self"]
    if not isinstance(out, torch.Tensor):
        return f"expected a tensor, got {type(out).__name__}"
    if out.shape != ref.shape or out.dtype != ref.dtype or out.device.type != ref.device.type:
        return f"got {tuple(out.shape)} {out.dtype} on {out.device}, expected {tuple(ref.shape)} {ref.dtype} on {ref.device.type}"
    if out.is_conj():
        return "the result still has its conjugate bit set"
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    if x.is_conj():
        if shares and out.numel() > 0:
            return "the result shares memory with self; a conjugated input must be materialised into a new tensor"
    elif not shares or out.storage_offset() != x.storage_offset() or out.stride() != x.stride():
        return "self has no conjugate bit: the result must be self itself (same memory, same strides), not a copy"
    if not _same_values(out, ref):
        return "the values differ from conj of the stored values"
    return None
