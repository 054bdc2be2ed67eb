"""The pointwise family's own machinery: its kernel form, the functions it takes from other
kernel files, the references it derives from the signatures, the shared activation cases."""

from __future__ import annotations

import ast

from kgb.aten_families import pointwise
from kgb.aten_families.pointwise_backward_cases import activation_cases
from kgb.aten_families.pointwise_solutions import Kernel, functions, render


def test_a_kernel_reads_every_operand_and_takes_its_extra_arguments():
    text = render(Kernel("demo", ("g", "x", "t"), "r = g * (x - t) * s", scalars=("s",), constexprs=("K",)))
    kernel = ast.parse(text).body[0]
    params = [a.arg for a in kernel.args.args]
    assert params[:7] == ["out_ptr", "a_ptr", "a_val", "b_ptr", "b_val", "c_ptr", "c_val"]
    assert params.index("s") < params.index("A_SCALAR") < params.index("C_SCALAR") < params.index("K")
    assert "t = _read(c_ptr, c_val, i, mask, sizes, c_st, NDIM, C_SCALAR, COMMON, CT)" in text
    assert text.rstrip().endswith("_write(out_ptr, r, i, mask, sizes, o_st, NDIM)")
    assert max(map(len, text.splitlines()[:6])) <= 100


def test_functions_are_taken_whole_with_their_decorator():
    text = functions("division", "_round_to", "_fdiv")
    assert [f.name for f in ast.parse(text).body] == ["_fdiv", "_round_to"]
    assert text.startswith("@triton.jit\ndef _fdiv(") and "_floor_div" not in text


def test_references_call_the_overload_their_schema_names():
    by_name = {p.name: p for p in pointwise.POINTWISE}
    assert "return torch.ops.aten.mul.Scalar(self, other)" in pointwise.references(by_name["mul"])
    fmax = pointwise.references(by_name["fmax"])
    assert fmax.startswith("def fmax(self, other):") and fmax.endswith("reference = fmax\n")
    assert pointwise.references(by_name["prelu"]).startswith("def reference(self, weight):")


def test_the_activation_gradients_share_one_table():
    names = {op: [c.name for c in activation_cases(op)] for op in ("log_sigmoid_backward", "mish_backward")}
    assert "mixed-f16-f32" not in names["log_sigmoid_backward"]
    assert [n for n in names["mish_backward"] if n != "mixed-f16-f32"] == [
        n.replace("log_sigmoid_backward", "mish_backward") for n in names["log_sigmoid_backward"]]
    softplus = {c.name: c.params for c in activation_cases("softplus_backward")}
    assert (softplus["smoke-f32"]["beta"], softplus["smoke-f32"]["threshold"]) == (1.0, 20.0)
    assert (softplus["mlp-f16"]["beta"], softplus["mlp-f16"]["threshold"]) == (2.0, 5.0)


def test_in_place_division_keeps_its_bench_values_normal_however_often_it_is_timed():
    """Timing divides a div_ bench case's own output again at every call, hundreds of calls on
    the same tensors; its values must stay where the GPU's division takes its usual time
    (version 1's standard-normal divisors and scalar 8.0 ran them to inf or to zero)."""
    import dataclasses

    import torch

    from kgb.aten_families import division

    bench = [c for c in division.cases("div_") if c.tag == "bench" and c.params["mode"] == division.NO_MODE]
    assert {c.name for c in bench} == {"div-f32", "scale-bf16"}
    for case in bench:
        other = case.params["other"]
        small = dataclasses.replace(case, params={**case.params, "shape": (256, 256),
                                                  "other": (256, 256) if isinstance(other, tuple) else other})
        inputs = division.make_inputs(small, torch.Generator().manual_seed(0), "cpu")
        x, divisor = inputs["self"], inputs["other"]
        assert not (x == 0).any()
        for _ in range(1000):
            x.div_(divisor)
        magnitude = x.float().abs()
        assert torch.isfinite(magnitude).all() and not (magnitude == 0).any(), case.name
        assert magnitude.max() < 2.0**40 and magnitude.min() > 2.0**-40, (case.name, magnitude.min(), magnitude.max())
