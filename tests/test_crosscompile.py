"""The compile-only GPU check: what the CPU interpreter accepts must also build for sm_90."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kgb import operators
from kgb.evaluate import EvalSettings, Status, evaluate
from kgb.evaluate.crosscompile import check

CANDIDATES = Path(__file__).parent / "candidates"


def reading_a_module_float(tmp_path: Path) -> Path:
    """A correct candidate whose kernel reads a plain module-level float: Triton's CPU
    interpreter runs it, no GPU compiles it ("Cannot access global variable")."""
    source = (CANDIDATES / "softmax_autotuned.py").read_text()
    source = source.replace("import triton.language as tl\n", 'import triton.language as tl\n\nNEG_INF = float("-inf")\n')
    path = tmp_path / "softmax_module_float.py"
    path.write_text(source.replace('other=float("-inf")', "other=NEG_INF"))
    return path


def test_a_kernel_reading_a_module_float_passes_the_interpreter_but_not_the_gpu_compiler(tmp_path):
    spec = operators.load("aten::softmax")
    candidate = reading_a_module_float(tmp_path)
    assert "other=NEG_INF" in candidate.read_text()
    assert evaluate(candidate.read_text(), spec, EvalSettings(device="cpu", case_tags=("smoke",))).correct
    results = check(spec.path, candidate)
    assert results and all(error is not None for _, error in results)
    assert "global" in results[0][1].lower()


def test_with_compile_for_a_cpu_evaluation_reports_the_gpu_compile_error(tmp_path):
    spec = operators.load("aten::softmax")
    settings = EvalSettings(device="cpu", case_tags=("smoke",), compile_for=90)
    bad = evaluate(reading_a_module_float(tmp_path).read_text(), spec, settings)
    assert bad.status == Status.COMPILE_ERROR
    assert "correct in the CPU interpreter" in bad.message and "sm_90" in bad.message
    assert evaluate(spec.solution_path.read_text(), spec, settings).correct


def test_every_launch_is_recorded_with_its_types_and_constexprs():
    spec = operators.load("aten::softmax")
    results = check(spec.path, spec.solution_path)
    assert results and all(error is None for _, error in results)
    launch = results[0][0]
    signature = dict(launch.signature)
    assert launch.kernel == "_softmax_rows"
    assert signature["x_ptr"].startswith("*") and signature["n_cols"] == "i32"
    assert signature["BLOCK"] == "constexpr" and dict(launch.constexprs)["BLOCK"] >= 1


def test_an_autotuned_kernel_is_compiled_with_its_config():
    results = check(operators.load("aten::softmax").path, CANDIDATES / "softmax_autotuned.py")
    assert results and all(error is None for _, error in results)
    assert all(dict(launch.options)["num_warps"] == 4 for launch, _ in results)  # its first config


def test_the_ptx_shows_whether_half_products_are_fused(tmp_path):
    # affine_grid_generator rounds each linspace step to float16 as PyTorch does; fused, the
    # GPU computes -1 + step * i as one half FMA and misses PyTorch by a few ulp (seen on an
    # H200), so its solution launches with enable_fp_fusion=False.
    spec = operators.load("aten::affine_grid_generator")
    fused = tmp_path / "fused.py"
    fused.write_text(spec.solution_path.read_text().replace("enable_fp_fusion=False", "enable_fp_fusion=True"))
    for candidate, expect_fma in ((spec.solution_path, False), (fused, True)):
        ptx = tmp_path / candidate.stem  # check() makes the folder
        results = check(spec.path, candidate, ("smoke",), ptx_dir=ptx)
        assert results and all(error is None for _, error in results)
        texts = [f.read_text() for f in sorted(ptx.glob("*.ptx"))]
        assert len(texts) == len(results)
        assert any("fma.rn.f16" in t for t in texts) == expect_fma, candidate.name


@pytest.mark.parametrize("source", ["aten", "vllm", "cublas"])
def test_every_solution_compiles_for_sm90(source):
    """Each solution's smoke-case launches build for the H100/H200 with Triton's own
    compiler, so a kernel that only the interpreter accepts fails CI, not a GPU run.
    One test per source: each stays well inside the per-test timeout on a busy machine."""

    def failures(op: str) -> list[str]:
        spec = operators.load(op)
        results = check(spec.path, spec.solution_path)
        if not results:
            return [f"{op}: no Triton launch recorded"]
        return [f"{op}: {launch.kernel}: {error[-400:]}" for launch, error in results if error]

    ops = [op for op in operators.select(source, None) if operators.load(op).kernel_required]
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        found = [f for batch in pool.map(failures, ops) for f in batch]
    assert not found, "\n".join(found)
