"""The matmul family: bmm, linear and matmul, matrix products accumulated in float32 and
rounded once, over operands of any strides. They share the batched GEMM
(kernels/matmul.py) and the drawing of transposed operands; each member's task text
(matmul_text.py), cases (matmul_cases.py), inputs and entry point (kernels/bmm.py,
linear.py, matmul_entry.py) are its own."""

from __future__ import annotations

from dataclasses import replace

import torch

from kgb.aten_families import matmul_text as text
from kgb.aten_families.member import Member
from kgb.aten_families.source import IMPORTS as PLAIN_IMPORTS
from kgb.aten_families.source import kernel_body, solution
from kgb.aten_families.sum_tolerance import compare_sums
from kgb.aten_families.texts import member
from kgb.operators import Case

VERSION = 2  # 2: an output's atol is at least 1e-4 x the magnitude of the products it adds
SPEC_HELPERS = ("sum_tolerance",)
IMPORTS = "import math\n\nimport torch\nimport triton\nimport triton.language as tl\n"


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.matmul_cases import CASES

    return CASES[name]


def _draw(shape, transpose, dtype, gen):
    """randn of `shape` in dtype; with `transpose`, stored with its last two dims swapped
    (a column-major view)."""
    if transpose and len(shape) >= 2:
        swapped = (*shape[:-2], shape[-1], shape[-2])
        return torch.randn(swapped, generator=gen).to(dtype).transpose(-1, -2)
    return torch.randn(shape, generator=gen).to(dtype)


def bmm_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    mats = []
    for rows, cols, letter in ((p["m"], p["k"], p["layout"][0]), (p["k"], p["n"], p["layout"][1])):
        if letter == "e":  # one matrix shared by every batch (batch stride 0)
            mats.append(_draw((1, rows, cols), False, dtype, gen).expand(p["b"], rows, cols))
        else:
            mats.append(_draw((p["b"], rows, cols), letter == "t", dtype, gen))
    return dict(self=mats[0].to(device), mat2=mats[1].to(device))


def linear_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape, n_out = tuple(p["x"]), p["out_features"]
    n_in = shape[-1]
    x = _draw(shape, p["tx"], dtype, gen)
    scale = 1.0 / max(n_in, 1) ** 0.5  # keep outputs O(1), like an initialised layer
    w = torch.randn((n_in, n_out) if p["tw"] else (n_out, n_in), generator=gen) * scale
    if p["tw"]:
        w = w.t()
    b = torch.randn(n_out, generator=gen) if p["bias"] else None
    return dict(
        input=x.to(device),
        weight=w.to(dtype).to(device),
        bias=None if b is None else b.to(dtype).to(device),
    )


def matmul_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    a = _draw(tuple(p["a"]), p["ta"], dtype, gen)
    b = _draw(tuple(p["b"]), p["tb"], dtype, gen)
    return dict(self=a.to(device), other=b.to(device))


def _products_magnitude(inputs: dict) -> torch.Tensor:
    """float64, per output: sqrt(sum of the squares of the products it adds, and of the bias)."""
    if "input" in inputs:  # linear: input @ weight.T + bias
        a, b, bias = inputs["input"], inputs["weight"].t(), inputs["bias"]
    else:
        a, b, bias = inputs["self"], inputs.get("mat2", inputs.get("other")), None
    squares = torch.matmul(a.detach().double().square(), b.detach().double().square())
    return (squares if bias is None else squares + bias.detach().double().square()).sqrt()


def compare(actual, expected, case, inputs):
    """`sum_tolerance.compare_sums`: an output that cancels (a dot product) is judged by the
    magnitude of its products."""
    return compare_sums(actual, expected, case, inputs, _products_magnitude)


# member -> (the function its spec binds as make_inputs, its entry point's kernel file)
MEMBERS = {
    "bmm": ("bmm_inputs", "bmm"),
    "linear": ("linear_inputs", "linear"),
    "matmul": ("matmul_inputs", "matmul_entry"),
}


def members() -> list[Member]:
    out = []
    for name, (inputs, entry) in MEMBERS.items():
        # bmm needs no merging of dims, hence neither _merge nor math
        kernels, imports = (["matmul"], PLAIN_IMPORTS) if name == "bmm" else (["merge", "matmul"], IMPORTS)
        m = member(text, name, "matmul", VERSION, cases(name), solution(kernels, kernel_body(entry), imports), inputs)
        out.append(replace(m, binds={**m.binds, "compare": "compare"}))
    return out
