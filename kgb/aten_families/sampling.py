"""The sampling family: the random ATen operators bernoulli, exponential_, poisson and
rrelu_with_noise. Each draws independent samples in its kernel from a Philox stream
seeded on the host per call, over tensors of any strides; none can equal PyTorch's own
draws, so each is checked statistically (`sampling_checks`). The members differ in what
they draw, hence in their task text (`sampling_text`), cases (`sampling_cases`), inputs,
comparison and kernel (`kernels/<member>.py`); the seed (`kernels/philox.py`) and the
strided addressing (`kernels/strided_index.py`) of their solutions are written once."""

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
def poisson_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    rates = torch.tensor(p["rates"], dtype=torch.float64)

    def draw(shape):
        pick = torch.randint(len(p["rates"]), shape, generator=gen)
        return rates[pick].to(getattr(torch, p["dtype"])).to(device)

    layout = "transposed" if p["transposed"] else "contiguous"
    return dict(self=_layout(p["shape"], layout, draw))


# ---- rrelu_with_noise -----------------------------------------------------------------------
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

# name -> (the spec's extra assignments, reference source, the stem of its kernel file and
# of the functions its spec binds)
MEMBERS = {
    "bernoulli": (RANDOM, BERNOULLI_REFERENCE, "bernoulli"),
    "exponential_": (RANDOM + '\nINOUT_ARGS = ("self",)\n', "reference = torch.ops.aten.exponential_.default\n",
                     "exponential"),
    "poisson": (RANDOM, "reference = torch.ops.aten.poisson.default\n", "poisson"),
    "rrelu_with_noise": ('INOUT_ARGS = ("noise",)\n', RRELU_REFERENCE, "rrelu"),
}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.sampling_cases import CASES

    return CASES[name]()


def members() -> list[Member]:
    out = []
    for name, (extra, reference, stem) in MEMBERS.items():
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
