"""The unary family's table: every case draws from a distribution its member defines, the
layouts are views of what was drawn, and polygamma's digamma cases get their own values."""

from __future__ import annotations

import torch

from kgb.aten_families import unary
from kgb.aten_families.unary_ops import OPS
from kgb.operators import Case


def _inputs(name, **params):
    params = dict(dict(shape=(3, 4), dtype="float32", layout="contiguous", dist="normal"), **params)
    case = Case("c", "check", params)
    return unary.inputs_of(name)(case, torch.Generator().manual_seed(0), "cpu")


def test_every_case_names_a_distribution_of_its_member():
    for op in OPS:
        for case in unary.cases(op.name):
            assert op.pick(case.params) in op.draws, (op.name, case.name)


def test_layouts_are_views_of_the_drawn_tensor():
    strides = {"contiguous": (4, 1), "transposed": (1, 3), "strided": (8, 2), "expanded": (0, 1)}
    for layout, stride in strides.items():
        x = _inputs("silu", layout=layout)["self"]
        assert x.shape == (3, 4) and x.stride() == stride, layout


def test_extra_arguments_come_from_the_case_in_signature_order():
    assert list(_inputs("polygamma", dist="positive", n=2)) == ["n", "self"]
    assert _inputs("logit", dist="probs", eps=0.25)["eps"] == 0.25


def test_only_digamma_draws_its_poles():
    digamma = _inputs("polygamma", shape=(64,), dist="edge", n=0)["self"]
    trigamma = _inputs("polygamma", shape=(64,), dist="edge", n=1)["self"]
    assert digamma.isnan().any() and (digamma == 0).any()
    assert not trigamma.isnan().any() and not (trigamma == 0).any()
