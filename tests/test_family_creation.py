"""The pieces shared by the filling, strided-empty and sampling families: the strided
folding their solutions paste, the scalar split, the result-form checks and the
statistical comparisons' verdicts on right and wrong samples."""

from __future__ import annotations

import torch

from kgb.aten_families import sampling, strided_empty
from kgb.aten_families.kernels.scalar_fill import _split
from kgb.aten_families.kernels.strided_index import _layout
from kgb.aten_families.results import outside_untouched, returns_self, tensor_form
from kgb.operators import Case


def test_layout_merges_dims_only_where_every_tensor_chains():
    a = torch.empty(4, 6, 8)
    assert _layout(a) == [1, 1, 1, 1, 192] + [0, 0, 0, 0, 0, 1]  # dense: one dim
    b = torch.empty(8, 6, 4).permute(2, 1, 0)
    assert _layout(a, b) == [1, 1, 4, 6, 8] + [0, 0, 0, 48, 8, 1] + [0, 0, 0, 1, 4, 24]
    block = torch.empty(5, 1, 10)[..., 2:5]
    assert _layout(block) == [1, 1, 1, 5, 3] + [0, 0, 0, 0, 10, 1]


def test_split_keeps_a_float64_value_in_two_float32_halves():
    for x in (0.1, -3.3895313892515355e38, 2.0**-30 + 1.0, -2.75):
        hi, lo = _split(x)
        assert hi + lo == x or abs(hi + lo - x) <= abs(x) * 2.0**-48
        assert torch.tensor(hi, dtype=torch.float32).item() == hi
    assert _split(float("inf")) == (float("inf"), 0.0)


def test_result_form_checks():
    e = torch.zeros(3, 4)
    assert tensor_form(torch.zeros(3, 4), e) is None
    assert tensor_form(torch.zeros(4, 3).t(), e) is None
    assert "stride" in tensor_form(torch.zeros(4, 3).t(), e, strides=True)
    assert "dtype" in tensor_form(torch.zeros(3, 4, dtype=torch.float16), e)
    assert "expected a tensor" in tensor_form(3, e)
    base = torch.zeros(4, 8)
    view = base[:, 2:5]
    assert returns_self(view, view, "zero_") is None
    assert "zero_ must return self" in returns_self(view.clone(), view, "zero_")
    ref = base.clone()[:, 2:5]
    assert outside_untouched(view, ref) is None
    base[0, 0] = 1
    assert "outside the view" in outside_untouched(view, ref)


def test_empty_strided_compare_wants_the_strides_and_the_storage():
    case = strided_empty.cases("empty_strided")[0]
    e = torch.empty(40).as_strided((4, 5), (8, 1))
    assert strided_empty.compare({"return": torch.empty(40).as_strided((4, 5), (8, 1))}, {"return": e}, case, {}) is None
    assert "stride" in strided_empty.compare({"return": torch.empty(4, 5)}, {"return": e}, case, {})
    short = torch.empty(40).as_strided((4, 5), (8, 1))
    short.untyped_storage().resize_(80)  # 20 elements: the last row is out of bounds
    assert "storage of 80 bytes, needs 116" in strided_empty.compare({"return": short}, {"return": e}, case, {})


def test_sampling_compares_pass_fair_draws_and_fail_biased_ones():
    gen = torch.Generator().manual_seed(0)
    case = Case("t", "check", dict(shape=[64, 512], dtype="float32", p=0.3, p_shape=None, p_dtype="float32",
                                   layout="contiguous"), entry="bernoulli_p")
    inputs = sampling.bernoulli_inputs(case, gen, "cpu")
    fair = (torch.rand(64, 512, generator=gen) < 0.3).float()
    expected = {"return": torch.zeros(64, 512)}
    assert sampling.bernoulli_compare({"return": fair}, expected, case, inputs) is None
    biased = (torch.rand(64, 512, generator=gen) < 0.36).float()
    assert "share of ones" in sampling.bernoulli_compare({"return": biased}, expected, case, inputs)
    repeated = fair.clone()
    repeated[:, 256:] = repeated[:, :256]
    assert "correlated" in sampling.bernoulli_compare({"return": repeated}, expected, case, inputs)

    case = sampling.cases("exponential_")[3]  # f32-large, rate 1
    x = -torch.log1p(-torch.rand(512, 1023, generator=gen, dtype=torch.float64)).float()
    ref = {"self": torch.zeros(512, 1023)}
    assert sampling.exponential_compare({"return": x}, ref, case, {"self": x}) is None
    y = x * 1.05
    assert "not exponential" in sampling.exponential_compare({"return": y}, ref, case, {"self": y})
