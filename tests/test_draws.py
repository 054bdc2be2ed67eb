"""A case's inputs (kgb.evaluate.draws): the same in every evaluation from the case's own
seed, others from another seed, from the judged device's generator."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from kgb import operators
from kgb.evaluate.correctness import same_bits
from kgb.evaluate.draws import draw_inputs


def test_a_seed_draws_the_same_inputs_bit_for_bit_and_another_seed_others():
    spec = operators.load("aten::add")
    case = next(c for c in spec.cases if c.tag == "check")
    first, again, other = (draw_inputs(spec, case, seed, "cpu") for seed in (case.seed, case.seed, case.seed + 1))
    tensors = [k for k, v in first.items() if isinstance(v, torch.Tensor) and v.numel() > 1]
    assert tensors
    assert all(same_bits(first[k], again[k]) for k in tensors)
    assert not all(same_bits(first[k], other[k]) for k in tensors)


def test_the_spec_gets_the_devices_generator_seeded_with_the_draws_seed():
    seen = {}

    def make_inputs(case, gen, device):
        seen["generator"] = gen.device
        seen["default"] = torch.empty(0).device
        return {"x": torch.randn(4, generator=gen)}

    spec = SimpleNamespace(module=SimpleNamespace(make_inputs=make_inputs))
    inputs = draw_inputs(spec, SimpleNamespace(), 5, "cpu")
    assert seen == {"generator": torch.device("cpu"), "default": torch.device("cpu")}
    assert same_bits(inputs["x"], torch.randn(4, generator=torch.Generator().manual_seed(5)))
