"""The sampling family: the random ATen operators bernoulli, exponential_, poisson and
rrelu_with_noise. Each draws independent samples in its kernel from a Philox stream
seeded on the host per call, over tensors of any strides; none can equal PyTorch's own
draws, so each is checked statistically (`sampling_checks`). The members differ in what
they draw, hence in their task text (`sampling_text`), cases, inputs, comparison and
kernel (`kernels/<member>.py`); the seed (`kernels/philox.py`) and the strided addressing
(`kernels/strided_index.py`) of their solutions are written once."""

from __future__ import annotations

import torch

from kgb.aten_families import sampling_text as text
from kgb.aten_families.member import Member
from kgb.aten_families.sampling_checks import (  # noqa: F401 - the members' specs bind them
    bernoulli_compare,
    exponential_compare,
    poisson_compare,
    rrelu_compare,
)
from kgb.aten_families.source import IMPORTS, kernel_body, solution
from kgb.operators import Case

VERSION = 2
SPEC_HELPERS = ("sampling_checks", "results", "views")

RANDOM = "RANDOM = True  # every call must draw new samples: the judge calls twice on the same inputs\n"


def _layout(shape, layout, make):
    """make(shape) with `layout` applied, keeping the logical shape: `transposed` (of the
    last two dims), `sliced` (every other element of a row twice as long, from the second)."""
    shape = list(shape)
    if layout == "transposed" and len(shape) >= 2:
        shape[-2], shape[-1] = shape[-1], shape[-2]
        return make(shape).transpose(-2, -1)
    if layout == "sliced" and shape:
        shape[-1] *= 2
        return make(shape)[..., 1::2]
    return make(shape)


# ---- bernoulli ------------------------------------------------------------------------------
def _bernoulli_case(
    name, tag, entry, shape, dtype="float32", p=None, p_shape=None, p_dtype="float32", layout="contiguous"
):
    params = dict(shape=shape, dtype=dtype, p=p, p_shape=p_shape, p_dtype=p_dtype, layout=layout)
    return Case(name, tag, params, entry=entry)


def _bernoulli_cases() -> list[Case]:
    c = _bernoulli_case
    return [
        c("smoke-probs-f32", "smoke", "bernoulli", [64, 64]),
        c("smoke-p-f16", "smoke", "bernoulli_p", [32, 128], "float16", p=0.3),
        c("smoke-tensor-int64", "smoke", "bernoulli_Tensor", [16, 256], "int64", p_shape=[256]),
        c("probs-f16", "check", "bernoulli", [256, 1024], "float16"),
        c("probs-bf16-transposed", "check", "bernoulli", [300, 777], "bfloat16", layout="transposed"),
        c("probs-f64", "check", "bernoulli", [100003], "float64"),
        c("dropout-keep-f32", "check", "bernoulli_p", [512, 1023], "float32", p=0.9),
        c("dropout-bf16", "check", "bernoulli_p", [8, 128, 257], "bfloat16", p=0.5),
        c("p-bool", "check", "bernoulli_p", [65537, 3], "bool", p=0.125),
        c("p-zero", "check", "bernoulli_p", [1000], "float32", p=0.0),
        c("p-one-uint8", "check", "bernoulli_p", [1000], "uint8", p=1.0),
        c("p-scalar-self", "check", "bernoulli_p", [], "float32", p=0.5),
        c("p-empty", "check", "bernoulli_p", [0, 7], "float32", p=0.5),
        c("tensor-broadcast-rows", "check", "bernoulli_Tensor", [1024, 257], "float16", p_shape=[1024, 1]),
        c("tensor-f64-p-sliced", "check", "bernoulli_Tensor", [512, 300], "float32", p_shape=[512, 300],
          p_dtype="float64", layout="sliced"),
        c("tensor-bool", "check", "bernoulli_Tensor", [4, 65536], "bool", p_shape=[4, 65536]),
        c("bench-probs-f32", "bench", "bernoulli", [8192, 8192]),
        c("bench-dropout-bf16", "bench", "bernoulli_p", [16, 2048, 4096], "bfloat16", p=0.9),
        c("bench-tensor-f16", "bench", "bernoulli_Tensor", [4096, 11008], "float16", p_shape=[4096, 11008]),
    ]


def _probabilities(shape, dtype, gen):
    """Uniform in [0, 1] with exact 0s and 1s sprinkled in."""
    p = torch.rand(shape, generator=gen, dtype=torch.float64)
    pick = torch.rand(shape, generator=gen)
    p = torch.where(pick < 0.02, 0.0, torch.where(pick > 0.98, 1.0, p))
    return p.to(dtype)


def bernoulli_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    if case.entry == "bernoulli":
        x = _layout(p["shape"], p["layout"], lambda s: _probabilities(s, dtype, gen).to(device))
        return dict(self=x)
    filler = lambda s: (torch.randn(s, generator=gen) > 0).to(dtype).to(device)
    x = _layout(p["shape"], p["layout"], filler)
    if case.entry == "bernoulli_p":
        return dict(self=x, p=p["p"])
    p_dtype = getattr(torch, p["p_dtype"])
    probs = _layout(p["p_shape"], p["layout"], lambda s: _probabilities(s, p_dtype, gen).to(device))
    return dict(self=x, p=probs)


# ---- exponential_ ---------------------------------------------------------------------------
def _exponential_cases() -> list[Case]:
    def c(name, tag, shape, dtype="float32", lambd=1.0, layout="contiguous"):
        return Case(name, tag, dict(shape=shape, dtype=dtype, lambd=lambd, layout=layout))

    return [
        c("smoke-f32", "smoke", [64, 64]),
        c("smoke-f16-rate", "smoke", [4096], "float16", 2.5),
        c("smoke-bf16-sliced", "smoke", [32, 100], "bfloat16", 0.5, "sliced"),
        c("f32-large", "check", [512, 1023]),
        c("f16", "check", [256, 1024], "float16", 4.0),
        c("bf16-transposed", "check", [300, 777], "bfloat16", 0.25, "transposed"),
        c("f64", "check", [100003], "float64", 1.5),
        c("small-rate", "check", [200000], "float32", 1e-3),
        c("large-rate", "check", [3, 65537], "float32", 1e4),
        c("column-block", "check", [1024, 200], "float32", 1.0, "column_block"),
        c("scalar", "check", [], "float32", 1.0),
        c("empty", "check", [0, 16], "float32", 1.0),
        c("bench-f32", "bench", [8192, 8192]),
        c("bench-bf16", "bench", [4096, 11008], "bfloat16", 2.0),
        c("bench-f16", "bench", [16, 2048, 2048], "float16", 0.5),
    ]


def exponential_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, layout = p["shape"], p["layout"]

    def old_contents(s):  # negative values, which no correct sample can leave behind
        return (-1 - torch.rand(s, generator=gen)).to(getattr(torch, p["dtype"])).to(device)

    if layout == "column_block":  # 32 columns on either side of self in a wider matrix
        x = old_contents([*shape[:-1], shape[-1] + 64])[..., 32 : 32 + shape[-1]]
    else:
        x = _layout(shape, layout, old_contents)
    return dict(self=x, lambd=p["lambd"])


# ---- poisson --------------------------------------------------------------------------------
# Each case draws its rates from a small set, so that every rate has many samples and a
# CDF test of its own. The default set straddles the usual algorithm switch at 10.
_MIXED = (0.0, 1e-3, 0.5, 1.0, 3.7, 9.99, 10.0, 10.5, 27.5, 100.0, 1234.5)


def _poisson_cases() -> list[Case]:
    def c(name, tag, shape, dtype="float32", rates=_MIXED, transposed=False):
        return Case(name, tag, dict(shape=shape, dtype=dtype, rates=rates, transposed=transposed))

    return [
        c("smoke-f32", "smoke", [64, 64]),
        c("smoke-f16", "smoke", [4096], "float16"),
        c("mixed-f32", "check", [256, 512]),
        c("mixed-bf16-transposed", "check", [300, 401], "bfloat16", transposed=True),
        c("mixed-f16", "check", [128, 1024], "float16"),
        c("mixed-f64", "check", [65537], "float64"),
        c("small-rates", "check", [131072], "float32", (0.0, 0.01, 0.1, 0.3)),
        c("large-rates", "check", [2, 32768], "float32", (10.0, 50.0, 5000.0, 100000.0)),
        c("single-rate-10", "check", [65536], "float32", (10.0,)),
        c("scalar", "check", [], "float32", (4.5,)),
        c("empty", "check", [0, 8]),
        c("bench-mixed-f32", "bench", [4096, 8192]),
        c("bench-small-bf16", "bench", [4096, 8192], "bfloat16", (0.1, 0.5, 1.0, 2.0, 5.0)),
        c("bench-large-f32", "bench", [4096, 4096], "float32", (20.0, 100.0, 1000.0)),
    ]


def poisson_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    rates = torch.tensor(p["rates"], dtype=torch.float64)

    def draw(shape):
        pick = torch.randint(len(p["rates"]), shape, generator=gen)
        return rates[pick].to(getattr(torch, p["dtype"])).to(device)

    layout = "transposed" if p["transposed"] else "contiguous"
    return dict(self=_layout(p["shape"], layout, draw))


# ---- rrelu_with_noise -----------------------------------------------------------------------
def _rrelu_cases() -> list[Case]:
    def c(name, tag, shape, dtype="float32", training=True, lower=0.125, upper=1 / 3, layout="contiguous"):
        params = dict(shape=shape, dtype=dtype, training=training, lower=lower, upper=upper, layout=layout)
        return Case(name, tag, params)

    return [
        c("smoke-train-f32", "smoke", [64, 64]),
        c("smoke-eval-f32", "smoke", [37, 5], training=False),
        c("smoke-train-bf16-bounds", "smoke", [4096], "bfloat16", lower=0.1, upper=0.3),
        c("train-f32", "check", [512, 511]),
        c("train-bf16-self-transposed", "check", [300, 777], "bfloat16", layout="self_transposed"),
        c("train-f16", "check", [256, 1024], "float16", lower=0.01, upper=0.5),
        c("train-noise-transposed", "check", [129, 1000], "float32", layout="noise_transposed"),
        c("train-f64", "check", [100003], "float64"),
        c("train-fixed-slope", "check", [3, 4097], "float32", lower=0.2, upper=0.2),
        c("train-scalar", "check", [], "float32"),
        c("train-empty", "check", [0, 9], "float32"),
        c("eval-bf16", "check", [64, 4099], "bfloat16", training=False),
        c("eval-f16-transposed", "check", [257, 129], "float16", training=False, layout="self_transposed"),
        c("eval-f32-bounds", "check", [1000], "float32", training=False, lower=0.05, upper=0.45),
        c("bench-train-f32", "bench", [4096, 8192]),
        c("bench-train-bf16", "bench", [16, 2048, 1024], "bfloat16"),
        c("bench-eval-f16", "bench", [16, 2048, 1024], "float16", training=False),
    ]


def rrelu_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])

    def make_self(shape):
        x = torch.randn(shape, generator=gen) * 3
        x = torch.where(torch.rand(shape, generator=gen) < 0.01, 0.0, x)  # some exact zeros
        return x.to(dtype).to(device)

    def make_noise(shape):
        if p["training"]:  # NaN: an element a solution forgets to write shows
            noise = torch.full(shape, float("nan"))
        else:
            noise = torch.rand(shape, generator=gen) * 5  # must come back unchanged
        return noise.to(dtype).to(device)

    x = _layout(p["shape"], "transposed" if p["layout"] == "self_transposed" else "contiguous", make_self)
    noise = _layout(p["shape"], "transposed" if p["layout"] == "noise_transposed" else "contiguous", make_noise)
    return dict(self=x, noise=noise, lower=p["lower"], upper=p["upper"], training=p["training"])


def rrelu_random(case: Case) -> bool:
    """rrelu_with_noise's RANDOM, the judge's flag per case: training draws new slopes every call."""
    return bool(case.params["training"])


RRELU_REFERENCE = '''\
def reference(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    op = torch.ops.aten.rrelu_with_noise.default
    if self.dtype == torch.float16 and self.device.type == "cpu":
        # ATen has no float16 CPU kernel: compute in float32, as its CUDA kernel does
        noise32 = noise.float()
        out = op(self.float(), noise32, lower, upper, training, generator)
        noise.copy_(noise32)
        return out.half()
    return op(self, noise, lower, upper, training, generator)
'''

BERNOULLI_REFERENCE = '''\
reference = {
    "bernoulli": torch.ops.aten.bernoulli.default,
    "bernoulli_p": torch.ops.aten.bernoulli.p,
    "bernoulli_Tensor": torch.ops.aten.bernoulli.Tensor,
}
'''

# name -> (cases, the spec's extra assignments, reference source, the stem of its kernel
# file and of the functions its spec binds)
MEMBERS = {
    "bernoulli": (_bernoulli_cases, RANDOM, BERNOULLI_REFERENCE, "bernoulli"),
    "exponential_": (_exponential_cases, RANDOM + '\nINOUT_ARGS = ("self",)\n',
                     "reference = torch.ops.aten.exponential_.default\n", "exponential"),
    "poisson": (_poisson_cases, RANDOM, "reference = torch.ops.aten.poisson.default\n", "poisson"),
    "rrelu_with_noise": (_rrelu_cases, 'INOUT_ARGS = ("noise",)\n', RRELU_REFERENCE, "rrelu"),
}


def cases(name: str) -> list[Case]:
    return MEMBERS[name][0]()


def members() -> list[Member]:
    out = []
    for name, (_, extra, reference, stem) in MEMBERS.items():
        binds = {"make_inputs": f"{stem}_inputs", "compare": f"{stem}_compare"}
        if name == "rrelu_with_noise":  # it draws only in training: RANDOM is a flag per case
            binds["RANDOM"] = "rrelu_random"
        out.append(Member(
            name=name, family="sampling", version=VERSION, task=text.TASKS[name],
            signatures=text.SIGNATURES[name], cases=cases(name), references=reference,
            solution=solution(["strided_index", "philox"], kernel_body(stem), "import itertools\n\n" + IMPORTS),
            binds=binds, extra=extra,
        ))
    return out
