"""The judge's comparison of outputs, compared a chunk at a time (kgb.evaluate.correctness)."""

from __future__ import annotations

import pytest
import torch

from kgb.evaluate import correctness
from kgb.evaluate.correctness import compare_tensor, rms


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(correctness, "CHUNK_ELEMENTS", 16)


def test_a_mismatch_in_a_later_chunk_is_counted_and_located(small_chunks):
    expected = torch.randn(6, 10, 7)
    actual = expected.clone()
    actual[4, 2, 3] += 1.0
    actual[5, 9, 6] = float("nan")
    message, max_abs, _ = compare_tensor("out", actual, expected, reduction=1)
    assert message.startswith("out: 2 of 420 elements outside tolerance")
    assert "first at (4, 2, 3)" in message
    assert max_abs != max_abs  # a NaN where a finite value was expected is the worst error


def test_a_strided_output_is_located_by_its_logical_index(small_chunks):
    expected = torch.randn(9, 13).t()  # not contiguous
    actual = expected.clone()
    actual[11, 7] -= 2.0
    message, _, _ = compare_tensor("out", actual, expected, reduction=1)
    assert "1 of 117" in message and "first at (11, 7)" in message


def test_infinities_must_match_exactly_and_do_not_count_as_errors(small_chunks):
    expected = torch.randn(50)
    expected[33] = float("inf")
    assert compare_tensor("out", expected.clone(), expected, 1) == (None, 0.0, 0.0)
    actual = expected.clone()
    actual[33] = 1e30
    message, max_abs, max_rel = compare_tensor("out", actual, expected, 1)
    assert "first at (33)" in message and (max_abs, max_rel) == (0.0, 0.0)


def test_the_scale_is_the_same_whole_or_in_chunks(monkeypatch):
    values = torch.randn(1000, dtype=torch.float64) * 3
    values[[5, 500]] = float("nan")
    whole = rms(values)
    monkeypatch.setattr(correctness, "CHUNK_ELEMENTS", 7)
    assert rms(values) == pytest.approx(whole, rel=1e-12)
    finite = values[torch.isfinite(values)]
    assert whole == pytest.approx(float(finite.square().mean().sqrt()), rel=1e-12)


def test_complex_outputs_are_compared_by_magnitude(small_chunks):
    expected = torch.randn(40, dtype=torch.complex64)
    actual = expected.clone()
    actual[37] += 1j
    message, max_abs, _ = compare_tensor("z", actual, expected, 1)
    assert "1 of 40" in message and "first at (37)" in message
    assert max_abs == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_float8_outputs_are_compared(dtype):
    # vllm::shuffle_rows's fp8 bench case was a runtime error on the H200 (session 31): the
    # scale was taken before widening, and float8 has no isfinite
    expected = torch.randn(300).to(dtype)
    assert compare_tensor("out", expected.clone(), expected, 1)[0] is None
    actual = expected.clone()
    actual[200] = torch.tensor(100.0).to(dtype)
    assert "first at (200)" in compare_tensor("out", actual, expected, 1)[0]
