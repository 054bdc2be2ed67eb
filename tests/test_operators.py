"""The dataset's self-test: every operator's spec is well formed, its solution passes its
own smoke cases through the real evaluator, and its comparison is strict enough that an
all-zeros answer and a perturbation just beyond tolerance both fail."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
)

from kgb import operators
from kgb.evaluate import EvalSettings, evaluate
from kgb.evaluate.correctness import clone_exact, compare_outputs, same_bits, tensors_in
from kgb.evaluate.draws import draw_inputs
from kgb.operators import CaseTag, published_tolerance

OPS = list(operators.discover())


def _expected(spec, case):
    """What the reference produces for a case: {"return": ..., <written arg>: tensor}."""
    gen = torch.Generator().manual_seed(case.seed)
    inputs = spec.module.make_inputs(case, gen, "cpu")
    ref_in = clone_exact(inputs)
    entry = spec.entry_of(case)
    args, kwargs = entry.bind(ref_in)
    ret = spec.reference_for(entry.name)(*args, **kwargs)
    written = (*spec.output_args, *spec.inout_args)
    return {"return": ret, **{n: ref_in[n] for n in written if n in ref_in}}, inputs


def _floating_leaves(value, path=()):
    if isinstance(value, torch.Tensor):
        if (value.is_floating_point() or value.is_complex()) and value.numel() > 0:
            yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _floating_leaves(v, (*path, k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _floating_leaves(v, (*path, i))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    items = list(value)
    items[head] = _replace(items[head], rest, new)
    return type(value)(items)


def _nudged(t: torch.Tensor, reduction: int) -> torch.Tensor | None:
    """t with one finite element moved to twice its allowed error (None: nothing finite)."""
    wide = t.to(torch.complex128 if t.is_complex() else torch.float64)
    finite = torch.isfinite(wide)
    if not finite.any():
        return None
    scale = float(wide[finite].abs().pow(2).mean().sqrt()) if finite.any() else 0.0
    tol = published_tolerance(str(t.dtype).removeprefix("torch."), reduction, scale)
    flat = wide.reshape(-1).clone()
    i = int(finite.reshape(-1).nonzero()[0])
    step = 2 * (tol.atol + tol.rtol * abs(flat[i].item())) + 1e-30
    flat[i] = flat[i] + step * (1 if flat[i].real >= 0 else -1)
    return flat.reshape(t.shape).to(t.dtype)


@pytest.mark.parametrize("op", OPS)
def test_spec_is_well_formed(op):
    spec = operators.load(op)
    assert spec.task and spec.version >= 1
    tags = {c.tag for c in spec.cases}
    assert {CaseTag.SMOKE, CaseTag.CHECK, CaseTag.BENCH} <= tags, f"{op} needs smoke, check and bench cases"
    problem = spec.problem()
    assert "solution" not in problem.reference


@pytest.mark.slow  # two minutes: handed to a worker first (tests/conftest.py)
def test_every_case_builds_inputs_its_reference_accepts():
    """Check and bench cases are too large to run in CI, yet a bad shape there (an
    expand_as target that is no expansion) only surfaced on the GPU. Fake tensors carry
    shapes and dtypes without data, so every case's inputs and reference run in seconds;
    only cases whose shapes depend on values (a mask, item()) cannot be followed. The smoke
    cases are left out: test_solution_passes_its_smoke_cases runs them, and their reference,
    for real."""
    def run(spec, case):
        entry = spec.entry_of(case)
        args, kwargs = entry.bind(spec.module.make_inputs(case, torch.Generator().manual_seed(case.seed), "cpu"))
        spec.reference_for(entry.name)(*args, **kwargs)

    followed, data_dependent, broken = 0, [], []
    for op in OPS:
        spec = operators.load(op)
        for case in (c for c in spec.cases if c.tag != CaseTag.SMOKE):
            try:
                with FakeTensorMode(allow_non_fake_inputs=True):
                    run(spec, case)
                followed += 1
            except (DataDependentOutputException, DynamicOutputShapeException):
                data_dependent.append(f"{op}:{case.name}")
            except Exception as exc:  # noqa: BLE001 - a spec bug, or a fake kernel's limit
                if case.tag == CaseTag.BENCH:
                    broken.append(f"{op}:{case.name}: {type(exc).__name__}: {str(exc)[:200]}")
                else:
                    run(spec, case)  # small enough to settle for real (fake mean over 0 elements divides by 0)
                    followed += 1
    assert not broken, "\n".join(broken)
    # gathers, scatters and paged caches build inputs from values (about 1 case in 10 today)
    assert followed > 5 * len(data_dependent), f"too few cases followed: {data_dependent}"


def test_every_argument_the_reference_writes_is_declared():
    """The judge compares only the arguments a spec declares written (OUTPUT_ARGS, INOUT_ARGS),
    and until judge v35 the process that timed a call sent back only those: one written but
    undeclared came back stale, and the H200 judged vLLM's copy_blocks wrong after timing
    although it was right."""
    undeclared = set()
    for op in OPS:
        spec = operators.load(op)
        declared = {*spec.output_args, *spec.inout_args}
        for case in spec.cases_for({CaseTag.SMOKE}):
            pristine = draw_inputs(spec, case, case.seed, "cpu")
            written = clone_exact(pristine)
            entry = spec.entry_of(case)
            args, kwargs = entry.bind(written)
            with torch.no_grad():
                spec.reference_for(entry.name)(*args, **kwargs)
            for name, before in pristine.items():
                pairs = zip(tensors_in(before), tensors_in(written[name]), strict=True)
                if name not in declared and not all(same_bits(a, b) for a, b in pairs):
                    undeclared.add(f"{op}: {name}")
    assert not undeclared, sorted(undeclared)


@pytest.mark.parametrize("op", OPS)
def test_solution_passes_its_smoke_cases(op):
    spec = operators.load(op)
    verdict = evaluate(spec.solution_path.read_text(), spec, EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=600))
    assert verdict.correct, f"{op}: {verdict.status}: {verdict.message}\n{verdict.logs[-3000:]}"


@pytest.mark.parametrize("op", OPS)
def test_zeros_and_nudges_fail(op):
    spec = operators.load(op)
    checked = 0
    for case in spec.cases_for({CaseTag.SMOKE}):
        expected, inputs = _expected(spec, case)
        for path, leaf in _floating_leaves(expected):
            zeros = _replace(expected, path, torch.zeros_like(leaf))
            message, _, _ = compare_outputs(spec, case, zeros, expected, inputs)
            assert message, f"{op} case {case.name}: all zeros at {path} passes"
            nudge = _nudged(leaf, case.reduction)
            if getattr(spec.module, "compare", None) is None and nudge is not None:
                nudged = _replace(expected, path, nudge)
                message, _, _ = compare_outputs(spec, case, nudged, expected, inputs)
                assert message, f"{op} case {case.name}: a nudge beyond tolerance at {path} passes"
            checked += 1
    if checked == 0:
        pytest.skip(f"{op} has no floating outputs in its smoke cases")


def test_reflection_pad1d_backward_admits_float32_accumulation():
    """PyTorch adds the mirrored terms in float16; a kernel that accumulates in float32, as
    the spec asks, differs where the terms cancel. The published tolerance alone turned 45
    of 400 draws of the float16 smoke case away; the spec's compare turns none away, and
    still catches an error of 0.01."""
    spec = operators.load("aten::reflection_pad1d_backward")
    case = next(c for c in spec.cases if c.name == "smoke-unbatched-f16")
    old = new = 0
    for seed in range(200):
        inputs = spec.module.make_inputs(case, torch.Generator().manual_seed(seed), "cpu")
        want = spec.module.reference(**inputs)
        got = spec.module.reference(inputs["grad_output"].float(), inputs["self"].float(), inputs["padding"]).half()
        tol = published_tolerance("float16", case.reduction, float(want.double().pow(2).mean().sqrt()))
        old += bool(((got.double() - want.double()).abs() > tol.atol + tol.rtol * want.double().abs()).any())
        new += spec.module.compare({"return": got}, {"return": want}, case, inputs) is not None
    assert old > 0 and new == 0
    wrong = want.clone()
    wrong[1, 1] += 0.01
    assert spec.module.compare({"return": wrong}, {"return": want}, case, inputs) is not None
