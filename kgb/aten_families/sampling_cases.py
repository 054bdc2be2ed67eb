"""The sampling family's cases (sampling.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

from kgb.operators import Case


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



# member -> the function that builds its cases
CASES = {
    "bernoulli": _bernoulli_cases,
    "exponential_": _exponential_cases,
    "poisson": _poisson_cases,
    "rrelu_with_noise": _rrelu_cases,
}
