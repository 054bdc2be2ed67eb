"""The lazy-bit family's cases (lazy_bits.py): those of resolve_conj and resolve_neg, and
those with the bit set that wait for the evaluator. This module holds hidden cases and is
kept out of the processes that run candidate code (see kgb.operators.import_spec_libraries):
only `lazy_bits.cases` and the generator import it."""

from __future__ import annotations

from kgb.operators import Case

# The evaluator cannot pass a tensor with the bit set: it copies every input with
# kgb.evaluate.correctness.clone_exact, which drops the bit, and its check that inputs are
# left untouched then compares conj(x) (-x) with x. The cases of CONJ_CASES and NEG_CASES
# (materialising path) are therefore kept out of the members' cases until the evaluator
# keeps the bit (Tensor._set_conj, Tensor._set_neg).


def _conj_case(name, tag, shape, dtype="complex64", layout="contiguous", conj=False):
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, conj=conj))


CONJ_CASES = [
    _conj_case("smoke-complex64-conj", "smoke", [5, 17], conj=True),
    _conj_case("complex64-conj", "check", [1000, 129], conj=True),
    _conj_case("complex64-conj-transposed", "check", [257, 65], layout="transposed", conj=True),
    _conj_case("complex64-conj-strided", "check", [33, 100], layout="strided", conj=True),
    _conj_case("complex64-conj-scalar", "check", [], conj=True),
    _conj_case("complex64-conj-empty", "check", [0, 5], conj=True),
    _conj_case("bench-complex64-conj", "bench", [4096, 4096], conj=True),
]

RESOLVE_CONJ_CASES = [
    _conj_case("smoke-f32", "smoke", [7, 33], "float32"),
    _conj_case("smoke-complex64", "smoke", [5, 17]),
    _conj_case("complex64", "check", [64, 1000]),
    _conj_case("complex64-transposed", "check", [257, 65], layout="transposed"),
    _conj_case("f32-hidden", "check", [8, 128, 768], "float32"),
    _conj_case("f16-transposed", "check", [300, 257], "float16", layout="transposed"),
    _conj_case("bf16", "check", [3, 100, 129], "bfloat16"),
    _conj_case("int64", "check", [1000, 37], "int64"),
    _conj_case("bool", "check", [129, 7], "bool"),
    _conj_case("scalar-f32", "check", [], "float32"),
    _conj_case("empty-f32", "check", [0, 16], "float32"),
    _conj_case("bench-complex64", "bench", [4096, 4096]),
    _conj_case("bench-f32", "bench", [8192, 8192], "float32"),
]


def _neg_case(name, tag, shape, dtype="float32", layout="contiguous", neg=None):
    # neg: None (no bit), "view" (torch._neg_view) or "imag" (z.conj().imag of a complex z)
    return Case(name, tag, dict(shape=tuple(shape), dtype=dtype, layout=layout, neg=neg))


NEG_CASES = [
    _neg_case("smoke-f32-neg", "smoke", [5, 17], neg="view"),
    _neg_case("imag-of-conj", "check", [1000, 129], neg="imag"),
    _neg_case("imag-of-conj-transposed", "check", [257, 65], layout="transposed", neg="imag"),
    _neg_case("f16-neg-strided", "check", [33, 100], "float16", layout="strided", neg="view"),
    _neg_case("bf16-neg", "check", [3, 100, 129], "bfloat16", neg="view"),
    _neg_case("int64-neg", "check", [1000, 37], "int64", neg="view"),
    _neg_case("f32-neg-scalar", "check", [], neg="view"),
    _neg_case("f32-neg-empty", "check", [0, 5], neg="view"),
    _neg_case("bench-imag-of-conj", "bench", [4096, 4096], neg="imag"),
]

RESOLVE_NEG_CASES = [
    _neg_case("smoke-f32", "smoke", [7, 33]),
    _neg_case("smoke-bf16-transposed", "smoke", [5, 17], "bfloat16", layout="transposed"),
    _neg_case("f32-hidden", "check", [8, 128, 768]),
    _neg_case("f16-strided", "check", [300, 257], "float16", layout="strided"),
    _neg_case("bf16", "check", [3, 100, 129], "bfloat16"),
    _neg_case("int64", "check", [1000, 37], "int64"),
    _neg_case("bool", "check", [129, 7], "bool"),
    _neg_case("complex64", "check", [64, 100], "complex64"),
    _neg_case("scalar-f32", "check", []),
    _neg_case("empty-f32", "check", [0, 16]),
    _neg_case("bench-f32", "bench", [8192, 8192]),
    _neg_case("bench-bf16", "bench", [16, 2048, 4096], "bfloat16"),
]

CASES = {"resolve_conj": RESOLVE_CONJ_CASES, "resolve_neg": RESOLVE_NEG_CASES}
