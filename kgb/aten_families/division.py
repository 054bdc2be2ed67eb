"""The division family: `div` (true division and the "trunc"/"floor" rounding modes),
its in-place `div_` and `floor_divide`. They share the strided launch and one division
kernel (kernels/division.py), the input generator below and the reference pattern;
each member's own text is in division_text.py."""

from __future__ import annotations

from functools import partial

import torch

from kgb.aten_families import division_text as text
from kgb.aten_families.layout import laid_out
from kgb.aten_families.member import Member
from kgb.aten_families.results import in_place_compare
from kgb.aten_families.source import solution
from kgb.operators import Case

# the modules whose functions the members' specs bind (they go into the specs' digests)
SPEC_HELPERS = ("layout", "results")

VERSION = 1
# div_ alone is at 2: its bench cases divide their own output again at every call, and their
# version-1 divisors (standard normal draws; the scalar 8.0) took the values out of the
# floats' normal range within tens of calls, and the division slowed: on the H200 its
# attn-scale-bf16 read 131 us in two sweeps and 244 us in six, its div-f32 184 us or 239-246 us,
# by how many calls had come before, and 300 calls slowed div-f32 1.7x, PyTorch's and the
# solution's alike (benchmarks/inplace_drift.py; docs/gpu-results.md, session 33)
INPLACE_VERSION = 2

NO_MODE = "-"  # the plain overloads, which take no rounding_mode


def _case(op, name, tag, shape, other, dtype, other_dtype=None, mode=NO_MODE, layout=None,
          other_layout=None, divisor="any", seed=0):
    """`other`: a shape (Tensor entries) or a Python number (Scalar entries). `divisor`: `any`
    (normal floats, nonzero ints), `away` (|other| in [0.25, 4], for rounded quotients),
    `unit` (|other| log-uniform in [2**-1/64, 2**1/64]: an element of an in-place quotient,
    divided by its same divisor call after call, moves a 64th of a binade a call at most)
    or `special` (self and other are the 8 values 0, +-1, +-2.5, +-inf, nan, crossed)."""
    kind = "Tensor" if isinstance(other, tuple) else "Scalar"
    entry = f"{op}_{kind}" + ("" if mode == NO_MODE else "_mode")
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype, mode=mode,
                  layout=layout, other_layout=other_layout, divisor=divisor)
    return Case(name, tag, params, seed=seed, entry=entry)


def floor_case(name, tag, shape, other, dtype, other_dtype=None, layout=None, other_layout=None,
               divisor="away", seed=0):
    """floor_divide has no rounding_mode parameter (and rounds away from small divisors by
    default); otherwise as `_case`."""
    entry = "floor_divide" if isinstance(other, tuple) else "floor_divide_Scalar"
    params = dict(shape=shape, other=other, dtype=dtype, other_dtype=other_dtype or dtype,
                  layout=layout, other_layout=other_layout, divisor=divisor)
    return Case(name, tag, params, seed=seed, entry=entry)


div_case = partial(_case, "div")
inplace_case = partial(_case, "div_")

DIV_CASES = [
    div_case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    div_case("smoke-floor-special", "smoke", (8, 1), (1, 8), "float32", mode="floor", divisor="special"),
    div_case("smoke-trunc-i32", "smoke", (3, 7), -3, "int32", mode="trunc", seed=1),
    div_case("true-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    div_case("true-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    div_case("true-f32-column", "check", (1823, 781), (1823, 1), "float32"),
    div_case("true-f32-t", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    div_case("true-i64", "check", (1000, 1000), (1000, 1000), "int64"),
    div_case("true-i32-0d-f32", "check", (300, 300), (), "int32", "float32"),
    div_case("true-bool", "check", (100, 77), (100, 77), "bool"),
    div_case("true-special", "check", (8, 1), (1, 8), "float32", divisor="special"),
    div_case("none-mode-f16", "check", (512, 1000), (512, 1000), "float16", mode=None),
    div_case("trunc-f16", "check", (1000, 513), (513,), "float16", mode="trunc", divisor="away"),
    div_case("trunc-bf16-t", "check", (513, 1000), (513, 1000), "bfloat16", mode="trunc", divisor="away", layout="t"),
    div_case("trunc-f32", "check", (1000, 1000), (1000, 1000), "float32", mode="trunc", divisor="away"),
    div_case("trunc-i64", "check", (1000, 1000), (1000,), "int64", mode="trunc"),
    div_case("trunc-i8", "check", (64, 1000), (64, 1000), "int8", mode="trunc"),
    div_case("trunc-special", "check", (8, 1), (1, 8), "float32", mode="trunc", divisor="special"),
    div_case("floor-f32-column", "check", (1823, 781), (1823, 1), "float32", mode="floor", divisor="away"),
    div_case("floor-f16", "check", (1000, 513), (1000, 513), "float16", mode="floor", divisor="away"),
    div_case("floor-bf16-t", "check", (513, 1000), (1000,), "bfloat16", mode="floor", divisor="away", layout="t"),
    div_case("floor-i32", "check", (1000, 1000), (1000, 1000), "int32", mode="floor"),
    div_case("floor-i16-i64", "check", (64, 1000), (1000,), "int16", "int64", mode="floor"),
    div_case("floor-special-f16", "check", (8, 1), (1, 8), "float16", mode="floor", divisor="special"),
    div_case("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    div_case("scalar-int-bf16", "check", (512, 1000), 3, "bfloat16", layout="t"),
    div_case("scalar-i64", "check", (1000, 100), 2, "int64"),
    div_case("scalar-zero-f32", "check", (100, 100), 0.0, "float32"),
    div_case("scalar-floor-tenth", "check", (1000, 1000), 0.1, "float32", mode="floor"),
    div_case("scalar-floor-i64", "check", (1000, 1000), -7, "int64", mode="floor"),
    div_case("scalar-trunc-f16", "check", (1000, 1000), -0.25, "float16", mode="trunc"),
    div_case("scalar-none-mode", "check", (1000, 100), 4, "int32", mode=None),
    div_case("empty", "check", (0, 5), (5,), "float32"),
    div_case("zero-dim", "check", (), (), "float32"),
    div_case("zero-dim-floor", "check", (), (), "int64", mode="floor"),
    div_case("div-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    div_case("attn-scale-bf16", "bench", (16, 2048, 4096), 8.0, "bfloat16"),
    div_case("floor-i64", "bench", (8192, 8192), (8192,), "int64", mode="floor"),
    div_case("floor-f32", "bench", (8192, 8192), (8192, 8192), "float32", mode="floor", divisor="away"),
]

DIV_INPLACE_CASES = [
    inplace_case("smoke-f32-bias", "smoke", (5, 37), (37,), "float32"),
    inplace_case("smoke-floor-i32", "smoke", (3, 7), -3, "int32", mode="floor", seed=1),
    inplace_case("smoke-trunc-f16-t", "smoke", (9, 6), (6,), "float16", "float32", mode="trunc", layout="t",
                  divisor="away", seed=2),
    inplace_case("true-bf16", "check", (4, 512, 768), (4, 512, 768), "bfloat16"),
    inplace_case("true-f16-rows", "check", (2, 1024, 1024), (1024,), "float16"),
    inplace_case("true-f32-column", "check", (1823, 781), (1823, 1), "float32"),
    inplace_case("true-f32-t", "check", (300, 257), (300, 257), "float32", layout="t", other_layout="slice"),
    inplace_case("true-slice-bf16", "check", (128, 513), (128, 513), "bfloat16", layout="slice"),
    inplace_case("true-f16-by-f32", "check", (300, 257), (257,), "float16", "float32"),
    inplace_case("true-bf16-by-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    inplace_case("true-special", "check", (8, 8), (1, 8), "float32", divisor="special"),
    inplace_case("none-mode-f32", "check", (512, 1000), (512, 1000), "float32", mode=None),
    inplace_case("trunc-f16", "check", (1000, 513), (513,), "float16", mode="trunc", divisor="away"),
    inplace_case("trunc-f32-t", "check", (513, 1000), (513, 1000), "float32", mode="trunc", divisor="away", layout="t"),
    inplace_case("trunc-i64", "check", (1000, 1000), (1000,), "int64", mode="trunc"),
    inplace_case("trunc-i8", "check", (64, 1000), (64, 1000), "int8", mode="trunc"),
    inplace_case("floor-f32", "check", (1823, 781), (1823, 1), "float32", mode="floor", divisor="away"),
    inplace_case("floor-bf16", "check", (1000, 513), (1000, 513), "bfloat16", mode="floor", divisor="away"),
    inplace_case("floor-i32-by-i64", "check", (1000, 1000), (1000,), "int32", "int64", mode="floor"),
    inplace_case("floor-special", "check", (8, 8), (1, 8), "float32", mode="floor", divisor="special"),
    inplace_case("scalar-f32", "check", (1000, 1000), 2.5, "float32"),
    inplace_case("scalar-int-bf16-t", "check", (512, 1000), 3, "bfloat16", layout="t"),
    inplace_case("scalar-zero-f16", "check", (100, 100), 0.0, "float16"),
    inplace_case("scalar-floor-tenth", "check", (1000, 1000), 0.1, "float32", mode="floor"),
    inplace_case("scalar-floor-i64", "check", (1000, 1000), -7, "int64", mode="floor"),
    inplace_case("scalar-trunc-f16", "check", (1000, 1000), -0.25, "float16", mode="trunc"),
    inplace_case("scalar-none-mode", "check", (1000, 100), 4, "float32", mode=None),
    inplace_case("empty", "check", (0, 5), (5,), "float32"),
    inplace_case("zero-dim", "check", (), (), "float32"),
    inplace_case("zero-dim-floor", "check", (), (), "int64", mode="floor"),
    # Timing calls a bench case hundreds of times on the same tensors, each element by the
    # same divisor, so these are within 2% of 1 in magnitude (INPLACE_VERSION); 1 + 2**-7 is
    # exact in bfloat16.
    inplace_case("div-f32", "bench", (8192, 8192), (8192, 8192), "float32", divisor="unit"),
    inplace_case("scale-bf16", "bench", (16, 2048, 4096), 1.0078125, "bfloat16"),
    inplace_case("floor-i64", "bench", (8192, 8192), (8192,), "int64", mode="floor"),
]

FLOOR_DIVIDE_CASES = [
    floor_case("smoke-f32", "smoke", (5, 37), (37,), "float32"),
    floor_case("smoke-special", "smoke", (8, 1), (1, 8), "float32", divisor="special"),
    floor_case("smoke-scalar-i32", "smoke", (3, 7), -3, "int32", seed=1),
    floor_case("f32-column", "check", (1823, 781), (1823, 1), "float32"),
    floor_case("f32-any", "check", (1000, 1000), (1000, 1000), "float32", divisor="any"),
    floor_case("f16", "check", (1000, 513), (1000, 513), "float16"),
    floor_case("bf16-t", "check", (513, 1000), (1000,), "bfloat16", layout="t"),
    floor_case("f32-slice-t", "check", (300, 257), (300, 257), "float32", layout="slice", other_layout="t"),
    floor_case("bf16-by-0d-f32", "check", (1000, 33), (), "bfloat16", "float32"),
    floor_case("f16-by-f32", "check", (300, 257), (257,), "float16", "float32"),
    floor_case("i32-by-f32", "check", (300, 300), (300,), "int32", "float32"),
    floor_case("i64", "check", (1000, 1000), (1000, 1000), "int64", divisor="any"),
    floor_case("i32", "check", (1000, 1000), (1000,), "int32", divisor="any"),
    floor_case("i16-by-i64", "check", (64, 1000), (1000,), "int16", "int64", divisor="any"),
    floor_case("i8", "check", (64, 1000), (64, 1000), "int8", divisor="any"),
    floor_case("special-f16", "check", (8, 1), (1, 8), "float16", divisor="special"),
    floor_case("special-bf16", "check", (8, 1), (1, 8), "bfloat16", divisor="special"),
    floor_case("scalar-tenth", "check", (1000, 1000), 0.1, "float32"),
    floor_case("scalar-f16", "check", (1000, 1000), -0.75, "float16"),
    floor_case("scalar-int-bf16", "check", (512, 1000), 3, "bfloat16", layout="t"),
    floor_case("scalar-zero-f32", "check", (100, 100), 0.0, "float32"),
    floor_case("scalar-i64", "check", (1000, 1000), -7, "int64"),
    floor_case("scalar-float-i64", "check", (1000, 100), 2.5, "int64"),
    floor_case("empty", "check", (0, 5), (5,), "float32"),
    floor_case("zero-dim", "check", (), (), "float32"),
    floor_case("zero-dim-i64", "check", (), (), "int64", divisor="any"),
    floor_case("floor-f32", "bench", (8192, 8192), (8192, 8192), "float32"),
    floor_case("floor-i64", "bench", (8192, 8192), (8192,), "int64", divisor="any"),
    floor_case("scalar-i32-bench", "bench", (16384, 8192), 7, "int32"),
    floor_case("floor-bf16", "bench", (16, 2048, 4096), (16, 2048, 4096), "bfloat16"),
]

CASES = {"div": DIV_CASES, "div_": DIV_INPLACE_CASES, "floor_divide": FLOOR_DIVIDE_CASES}


def cases(name: str) -> list[Case]:
    return CASES[name]


_SPECIAL = [0.0, 1.0, -1.0, 2.5, -2.5, float("inf"), float("-inf"), float("nan")]


def _rand(shape, dtype, gen, divisor="numerator"):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        if divisor == "numerator":
            return torch.randint(max(info.min + 1, -1000), min(info.max, 1000) + 1, shape, generator=gen).to(dtype)
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        return (torch.randint(1, 20, shape, generator=gen) * sign).to(dtype)
    if divisor in ("away", "unit"):
        sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
        if divisor == "unit":
            return (torch.exp2((torch.rand(shape, generator=gen) * 2 - 1) / 64) * sign).to(dtype)
        return ((torch.rand(shape, generator=gen) * 3.75 + 0.25) * sign).to(dtype)
    return (torch.randn(shape, generator=gen) * (8 if divisor == "numerator" else 1)).to(dtype)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype, other_dtype = getattr(torch, p["dtype"]), getattr(torch, p["other_dtype"])
    if p["divisor"] == "special":
        values = torch.tensor(_SPECIAL)
        self = values.reshape(8, 1).expand(p["shape"]).contiguous().to(dtype).to(device)
        other = values.reshape(p["other"]).to(other_dtype).to(device)
    else:
        self = laid_out(p["shape"], p["layout"], lambda shape: _rand(shape, dtype, gen), device)
        other = p["other"]
        if isinstance(other, tuple):
            divisor = p["divisor"]
            other = laid_out(other, p["other_layout"], lambda shape: _rand(shape, other_dtype, gen, divisor), device)
            if other.ndim == 0 and dtype in (torch.float16, torch.bfloat16):
                other = other.to(dtype).to(other_dtype)  # representable in the common dtype
    inputs = dict(self=self, other=other)
    if p.get("mode", NO_MODE) != NO_MODE:  # floor_divide has no rounding_mode
        inputs["rounding_mode"] = p["mode"]
    return inputs


compare = in_place_compare("div_")


def members() -> list[Member]:
    kernels = ["strided", "division"]
    div, inplace = dict(op="div", self="Tensor", ret="Tensor"), dict(op="div_", self="Tensor(a!)", ret="Tensor(a!)")
    return [
        Member(
            name="div", family="division", version=VERSION, task=text.DIV_TASK,
            signatures=text.DIV_SIGNATURES.format(**div), cases=DIV_CASES,
            references=text.DIV_REFERENCES.format(**div),
            solution=solution(kernels, text.DIV_HELPER + "\n\n" + text.DIV_ENTRIES.format(helper="_div", **div)),
        ),
        Member(
            name="div_", family="division", version=INPLACE_VERSION, task=text.DIV_INPLACE_TASK,
            signatures=text.DIV_SIGNATURES.format(**inplace), cases=DIV_INPLACE_CASES,
            references=text.DIV_REFERENCES.format(**inplace),
            solution=solution(kernels, text.DIV_INPLACE_HELPER + "\n\n" + text.DIV_ENTRIES.format(helper="_div_", **inplace)),
            binds={"make_inputs": "make_inputs", "compare": "compare"},
            extra='INOUT_ARGS = ("self",)',
        ),
        Member(
            name="floor_divide", family="division", version=VERSION, task=text.FLOOR_DIVIDE_TASK,
            signatures=text.FLOOR_DIVIDE_SIGNATURES, cases=FLOOR_DIVIDE_CASES,
            references=text.FLOOR_DIVIDE_REFERENCES,
            solution=solution(kernels, text.FLOOR_DIVIDE_ENTRIES),
        ),
    ]
