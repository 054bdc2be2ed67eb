"""The matmul family: bmm, linear and matmul, matrix products accumulated in float32 and
rounded once, over operands of any strides. They share the batched GEMM
(kernels/matmul.py) and the drawing of transposed operands; each member's task text
(matmul_text.py), cases, inputs and entry point (kernels/bmm.py, linear.py,
matmul_entry.py) are its own."""

from __future__ import annotations

import torch

from kgb.aten_families import matmul_text as text
from kgb.aten_families.member import Member
from kgb.aten_families.source import IMPORTS as PLAIN_IMPORTS
from kgb.aten_families.source import kernel_body, solution
from kgb.aten_families.texts import member
from kgb.operators import Case

VERSION = 1
SPEC_HELPERS = ()  # its spec functions use no helper module
IMPORTS = "import math\n\nimport torch\nimport triton\nimport triton.language as tl\n"


def _bmm(name, tag, b, m, k, n, dtype, layout="nn", seed=0):
    # layout: one letter per input, n = row-major, t = transposed view, e = expanded batch
    params = dict(b=b, m=m, k=k, n=n, dtype=dtype, layout=layout)
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


def _linear(name, tag, x, out_features, dtype, bias=True, tx=False, tw=False, seed=0):
    # tx: input stored with its last two dims swapped; tw: weight stored as (in, out)
    params = dict(x=x, out_features=out_features, dtype=dtype, bias=bias, tx=tx, tw=tw)
    return Case(name, tag, params, seed=seed, reduction=max(x[-1], 1))


def _matmul(name, tag, a, b, dtype, ta=False, tb=False, seed=0):
    # ta / tb: store that operand's last two dims transposed (a column-major view)
    params = dict(a=a, b=b, dtype=dtype, ta=ta, tb=tb)
    k = a[-1] if a else 1
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


CASES = {
    "bmm": [
        _bmm("smoke-f32", "smoke", 2, 5, 7, 3, "float32"),
        _bmm("smoke-f16-nt", "smoke", 3, 17, 33, 9, "float16", layout="nt", seed=1),
        _bmm("attn-scores-f32", "check", 24, 77, 64, 77, "float32", layout="nt"),
        _bmm("attn-values-f16", "check", 24, 77, 77, 64, "float16"),
        _bmm("vit-bf16", "check", 12, 197, 64, 197, "bfloat16", layout="nt"),
        _bmm("a-transposed-f32", "check", 4, 100, 300, 50, "float32", layout="tn"),
        _bmm("both-transposed-f16", "check", 4, 65, 129, 33, "float16", layout="tt"),
        _bmm("expanded-bf16", "check", 6, 40, 256, 96, "bfloat16", layout="ne"),
        _bmm("long-k-f32", "check", 2, 64, 2000, 48, "float32"),
        _bmm("vector-like", "check", 5, 1, 300, 1, "float32"),
        _bmm("odd-f16", "check", 3, 31, 17, 129, "float16"),
        _bmm("k-zero", "check", 3, 4, 0, 5, "float32"),
        _bmm("m-zero", "check", 3, 0, 8, 5, "float32"),
        _bmm("batch-zero", "check", 0, 4, 8, 5, "float16"),
        _bmm("bench-attn-f16", "bench", 512, 1024, 128, 1024, "float16", layout="nt"),
        _bmm("bench-square-bf16", "bench", 64, 512, 512, 512, "bfloat16"),
        _bmm("bench-f32", "bench", 16, 1024, 1024, 1024, "float32"),
    ],
    "linear": [
        _linear("smoke-f32", "smoke", (5, 7), 3, "float32"),
        _linear("smoke-f16-nobias", "smoke", (2, 3, 16), 9, "float16", bias=False, seed=1),
        _linear("bert-ffn-f32", "check", (2, 77, 768), 3072, "float32"),
        _linear("bert-ffn-f16", "check", (2, 77, 3072), 768, "float16"),
        _linear("classifier-bf16", "check", (64, 1024), 1000, "bfloat16"),
        _linear("vector-f32", "check", (768,), 100, "float32"),
        _linear("transposed-input", "check", (300, 129), 65, "float32", tx=True),
        _linear("transposed-weight-bf16", "check", (4, 33, 256), 96, "bfloat16", tw=True, bias=False),
        _linear("odd-f16", "check", (3, 5, 17), 31, "float16"),
        _linear("rows-zero", "check", (0, 16), 8, "float32"),
        _linear("in-zero", "check", (4, 0), 8, "float32"),
        _linear("out-zero", "check", (4, 16), 0, "float16"),
        _linear("bench-proj-bf16", "bench", (8192, 4096), 4096, "bfloat16"),
        _linear("bench-ffn-f16", "bench", (8, 2048, 1024), 4096, "float16"),
        _linear("bench-f32", "bench", (4096, 4096), 4096, "float32"),
    ],
    "matmul": [
        _matmul("smoke-mm-f32", "smoke", (5, 7), (7, 3), "float32"),
        _matmul("smoke-batched-f16", "smoke", (2, 1, 9, 17), (3, 17, 6), "float16", tb=True, seed=1),
        _matmul("smoke-dot-f32", "smoke", (33,), (33,), "float32", seed=2),
        _matmul("mm-f32", "check", (300, 768), (768, 100), "float32"),
        _matmul("mm-transposed-bf16", "check", (130, 257), (257, 65), "bfloat16", ta=True, tb=True),
        _matmul("vec-mat-bf16", "check", (512,), (512, 300), "bfloat16"),
        _matmul("mat-vec-f16", "check", (300, 512), (512,), "float16"),
        _matmul("dot-long-f32", "check", (4096,), (4096,), "float32"),
        _matmul("attn-f16", "check", (2, 12, 77, 64), (2, 12, 64, 77), "float16", tb=True),
        _matmul("broadcast-f32", "check", (2, 1, 40, 64), (3, 64, 50), "float32"),
        _matmul("tokens-weight-bf16", "check", (4, 77, 256), (256, 96), "bfloat16"),
        _matmul("weight-tokens-f32", "check", (96, 256), (4, 256, 77), "float32"),
        _matmul("batched-vec-f32", "check", (5, 7, 300), (300,), "float32"),
        _matmul("vec-batched-f16", "check", (300,), (5, 300, 7), "float16"),
        _matmul("k-zero", "check", (4, 0), (0, 5), "float32"),
        _matmul("dot-empty", "check", (0,), (0,), "float32"),
        _matmul("batch-empty", "check", (0, 4, 8), (8, 5), "float16"),
        _matmul("bench-square-bf16", "bench", (4096, 4096), (4096, 4096), "bfloat16"),
        _matmul("bench-tokens-f16", "bench", (8, 2048, 4096), (4096, 4096), "float16"),
        _matmul("bench-attn-f16", "bench", (32, 16, 1024, 128), (32, 16, 128, 1024), "float16", tb=True),
        _matmul("bench-f32", "bench", (2048, 2048), (2048, 2048), "float32"),
    ],
}


def cases(name: str) -> list[Case]:
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
        out.append(member(text, name, "matmul", VERSION, cases(name), solution(kernels, kernel_body(entry), imports),
                          inputs))
    return out
