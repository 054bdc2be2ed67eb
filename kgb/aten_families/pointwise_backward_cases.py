"""The cases of the pointwise family's gradients (pointwise.py, inputs in
pointwise_backward.py). The three activation gradients (log_sigmoid_backward,
mish_backward, softplus_backward) share one table.
Kept out of the processes that run candidate code (kgb.operators.import_spec_libraries):
pointwise.cases imports this module when a judge loads a spec."""

from __future__ import annotations

from kgb.aten_families.pointwise_backward import MEAN, NONE, SUM
from kgb.operators import Case


def _activation(name, tag, shape, dtype, grad_shape=None, grad_dtype=None, layout=None, scale=3.0,
                seed=0, **extra):
    """`self` is N(0, scale^2) (`scale=None`: the special values below, crossed with a random
    gradient); `grad_output` has `grad_shape` (default: `shape`). Layout `t` makes `self` a
    transposed view, `slice` every other column, `grad-t` transposes `grad_output`."""
    params = dict(shape=shape, dtype=dtype, grad_shape=grad_shape or shape, grad_dtype=grad_dtype or dtype,
                  layout=layout, scale=scale, **extra)
    return Case(name, tag, params, seed=seed)


# name ({op}: the operator's name), tag, shape, dtype, options
_ACTIVATION = [
    ("smoke-f32", "smoke", (5, 37), "float32", {}),
    ("smoke-special", "smoke", (14,), "float32", dict(scale=None)),
    ("smoke-bf16-t", "smoke", (9, 6), "bfloat16", dict(layout="t", seed=1)),
    ("mlp-bf16", "check", (4, 512, 768), "bfloat16", {}),
    ("mlp-f16", "check", (2, 1024, 1024), "float16", {}),
    ("conv-f32", "check", (8, 64, 56, 56), "float32", {}),
    ("wide-f32", "check", (1000, 1000), "float32", dict(scale=30.0)),
    ("odd-f32-t", "check", (300, 257), "float32", dict(layout="t")),
    ("slice-bf16", "check", (128, 513), "bfloat16", dict(layout="slice")),
    ("grad-t-f16", "check", (257, 300), "float16", dict(layout="grad-t")),
    ("grad-bcast-f32", "check", (64, 1, 33), "float32", dict(grad_shape=(64, 47, 33))),
    ("mixed-f16-f32", "check", (1000, 130), "float32", dict(grad_dtype="float16")),
    ("special-f16", "check", (14,), "float16", dict(scale=None)),
    ("special-bf16", "check", (14,), "bfloat16", dict(scale=None)),
    ("vector-f32", "check", (70001,), "float32", {}),
    ("zero-dim", "check", (), "float32", {}),
    ("empty", "check", (0, 5), "float32", {}),
    ("{op}-bf16-bench", "bench", (16, 2048, 4096), "bfloat16", {}),
    ("{op}-f32-bench", "bench", (8192, 8192), "float32", {}),
    ("{op}-f16-bench", "bench", (64, 256, 64, 64), "float16", {}),
]
# softplus_backward's (beta, threshold) where they are not nn.Softplus's (1.0, 20.0)
_SOFTPLUS = {"mlp-f16": (2.0, 5.0), "wide-f32": (0.5, 10.0), "special-bf16": (3.0, 15.0), "vector-f32": (1, 1)}


def activation_cases(op: str) -> list[Case]:
    out = []
    for name, tag, shape, dtype, options in _ACTIVATION:
        if name == "mixed-f16-f32" and op == "log_sigmoid_backward":
            continue  # PyTorch's CPU kernel refuses mixed dtypes
        if op == "softplus_backward":
            beta, threshold = _SOFTPLUS.get(name, (1.0, 20.0))
            options = dict(options, beta=beta, threshold=threshold)
        out.append(_activation(name.format(op=op), tag, shape, dtype, **options))
    return out


DEFAULT_BOUNDS = (1.0 / 8, 1.0 / 3)


def _rrelu(name, tag, shape, dtype, training, bounds=DEFAULT_BOUNDS, is_result=False, grad_dtype=None,
           layout=None, seed=0):
    """Layouts: `t` makes `self` and `noise` transposed views, `grad-t` transposes
    grad_output, `slice` takes every other column of `noise` and `self`."""
    params = dict(shape=shape, dtype=dtype, training=training, bounds=bounds, is_result=is_result,
                  grad_dtype=grad_dtype or dtype, layout=layout)
    return Case(name, tag, params, seed=seed)


RRELU = [
    _rrelu("smoke-train-f32", "smoke", (5, 37), "float32", True),
    _rrelu("smoke-eval-f32", "smoke", (4, 33), "float32", False, seed=1),
    _rrelu("smoke-eval-result-bf16-t", "smoke", (9, 6), "bfloat16", False, is_result=True, layout="t", seed=2),
    _rrelu("train-bf16", "check", (4, 512, 768), "bfloat16", True),
    _rrelu("train-f16", "check", (2, 1024, 1024), "float16", True, bounds=(0.1, 0.3)),
    _rrelu("train-f32-conv", "check", (8, 64, 56, 56), "float32", True),
    _rrelu("train-fixed-slope", "check", (1000, 100), "float32", True, bounds=(0.2, 0.2)),
    _rrelu("train-grad-t", "check", (300, 257), "float32", True, layout="grad-t"),
    _rrelu("train-slice-bf16", "check", (128, 513), "bfloat16", True, layout="slice"),
    _rrelu("eval-f32-conv", "check", (8, 64, 56, 56), "float32", False),
    _rrelu("eval-f16", "check", (2, 1024, 1024), "float16", False, bounds=(0.1, 0.3)),
    _rrelu("eval-bf16", "check", (1000, 300), "bfloat16", False),
    _rrelu("eval-t-f32", "check", (300, 257), "float32", False, layout="t"),
    _rrelu("eval-result-f32", "check", (1000, 100), "float32", False, is_result=True),
    _rrelu("eval-mixed-f16-f32", "check", (1000, 130), "float32", False, grad_dtype="float16"),
    _rrelu("eval-nan-f32", "check", (16, 33, 10), "float32", False),
    _rrelu("zero-dim", "check", (), "float32", True),
    _rrelu("zero-dim-eval", "check", (), "float32", False),
    _rrelu("empty", "check", (0, 5), "float32", False),
    _rrelu("train-bf16-bench", "bench", (16, 2048, 4096), "bfloat16", True),
    _rrelu("eval-f32-bench", "bench", (8192, 8192), "float32", False),
    _rrelu("train-f16-bench", "bench", (64, 256, 64, 64), "float16", True),
]


def _smooth_l1(name, tag, shape, dtype, reduction, beta, target_shape=None, target_dtype=None,
               layout=None, seed=0):
    """Layouts: `t` makes `self` a transposed view, `t-slice` also makes `target` a view of
    every other column."""
    params = dict(shape=shape, dtype=dtype, reduction=reduction, beta=beta,
                  target_shape=target_shape or shape, target_dtype=target_dtype or dtype, layout=layout)
    return Case(name, tag, params, seed=seed)


SMOOTH_L1 = [
    _smooth_l1("smoke-none-f32", "smoke", (5, 37), "float32", NONE, 1.0),
    _smooth_l1("smoke-mean-f32", "smoke", (4, 33), "float32", MEAN, 0.5, seed=1),
    _smooth_l1("smoke-sum-bf16-t", "smoke", (9, 6), "bfloat16", SUM, 2.0, layout="t", seed=2),
    _smooth_l1("none-f32", "check", (1000, 1000), "float32", NONE, 1.0),
    _smooth_l1("mean-f32-ninth", "check", (8, 4096), "float32", MEAN, 1.0 / 9),
    _smooth_l1("sum-f32-boxes", "check", (3000, 4), "float32", SUM, 1.0 / 9),
    _smooth_l1("none-f16", "check", (2, 1024, 1024), "float16", NONE, 1.0),
    _smooth_l1("sum-f16", "check", (1000, 513), "float16", SUM, 0.5),
    _smooth_l1("mean-bf16", "check", (4, 512, 512), "bfloat16", MEAN, 1.0),
    _smooth_l1("none-bf16-t", "check", (300, 257), "bfloat16", NONE, 0.25, layout="t"),
    _smooth_l1("target-bcast-f32", "check", (64, 47, 33), "float32", NONE, 1.0, target_shape=(1, 47, 33)),
    _smooth_l1("mixed-f32-f16", "check", (300, 257), "float32", NONE, 1.0, target_dtype="float16"),
    _smooth_l1("t-slice-f32", "check", (257, 300), "float32", MEAN, 2.0, layout="t-slice"),
    _smooth_l1("tiny-beta-f32", "check", (1000, 100), "float32", MEAN, 1e-3),
    _smooth_l1("big-beta-f32", "check", (1000, 100), "float32", SUM, 5.0),
    _smooth_l1("vector-f32", "check", (70001,), "float32", MEAN, 1.0),
    _smooth_l1("zero-dim", "check", (), "float32", MEAN, 1.0),
    _smooth_l1("empty", "check", (0, 5), "float32", NONE, 1.0),
    _smooth_l1("empty-mean", "check", (0, 5), "float32", MEAN, 1.0),
    _smooth_l1("none-f32-bench", "bench", (8192, 8192), "float32", NONE, 1.0),
    _smooth_l1("mean-bf16-bench", "bench", (16, 2048, 4096), "bfloat16", MEAN, 1.0),
    _smooth_l1("sum-f16-bench", "bench", (64, 256, 64, 64), "float16", SUM, 1.0),
]

CASES = {
    **{op: activation_cases(op) for op in ("log_sigmoid_backward", "mish_backward", "softplus_backward")},
    "rrelu_with_noise_backward": RRELU,
    "smooth_l1_loss_backward": SMOOTH_L1,
}
