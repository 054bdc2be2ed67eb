"""The triangular solves' matrices are written all at once (a bench case's 1,024 matrices, one
at a time, launched some 20,000 kernels on the GPU, 0.5-0.9 s of a work section), and are still
the ones drawn one matrix at a time: the same draws in the same order, the same diagonal and
the same NaN where the routine must not read."""

from __future__ import annotations

import pytest
import torch

from kgb import operators
from kgb.cublas_families import layout, triangular
from kgb.evaluate.correctness import same_bits
from kgb.evaluate.draws import draw_inputs

ROUTINES = tuple(f"cublas::{name}" for name in triangular.ROUTINES)
_STORAGE = triangular._triangle_storage  # its fill, which the oracle keeps


def _one_at_a_time(count, dim, lda, uplo, diag, dtype, gen, bench=False):
    """The oracle: kgb's shaping until session 68, a matrix at a time (its fill unchanged)."""
    fill, _ = _STORAGE(count, dim, lda, uplo, diag, dtype, gen, bench)

    def shape(buf, starts):
        for start in starts:
            a = layout.matrix(buf, dim, dim, lda, start)
            d = layout.random(dim, dtype, gen)
            if bench:
                spread = torch.rand(dim, generator=gen, dtype=torch.float64).to(d.abs().dtype)
                a.diagonal().copy_(d / d.abs() * (1.0 + triangular.BENCH_DIAGONAL_SPREAD * spread))
            else:
                a.diagonal().copy_(d / d.abs() * (1.5 + d.abs()))
            unread = torch.ones(dim, dim, dtype=torch.bool)
            unread = unread.triu(1) if uplo == "L" else unread.tril(-1)
            if diag == "U":
                unread |= torch.eye(dim, dtype=torch.bool)
            a.masked_fill_(unread, float("nan"))

    return fill, shape


# on a GPU too (benchmarks/gpu_check.sh runs it): there the draws are the CUDA generator's
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ROUTINES)
def test_every_case_draws_the_matrices_it_drew_one_at_a_time(op, device, monkeypatch):
    spec = operators.load(op)
    for case in spec.cases:
        drawn = draw_inputs(spec, case, case.seed, device)
        with monkeypatch.context() as m:
            m.setattr(triangular, "_triangle_storage", _one_at_a_time)
            oracle = draw_inputs(spec, case, case.seed, device)
        assert drawn.keys() == oracle.keys()
        for key, value in oracle.items():
            if isinstance(value, torch.Tensor):
                assert same_bits(drawn[key], value), (case.name, key)  # NaN where unread, in both
            else:
                assert drawn[key] == value, (case.name, key)


def test_no_matrix_is_shaped_for_an_empty_batch():
    fill, shape = triangular._triangle_storage(0, 4, 5, "L", "N", torch.float64, torch.Generator().manual_seed(0))
    buf = fill(7)
    before = buf.clone()
    shape(buf, [])
    assert same_bits(buf, before)
