"""The compile-only GPU check: what the CPU interpreter accepts must also build for sm_90."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgb import operators
from kgb.evaluate import EvalSettings, Status, evaluate
from kgb.evaluate.crosscompile import check, check_many

CANDIDATES = Path(__file__).parent / "candidates"


def reading_a_module_float(tmp_path: Path) -> Path:
    """A correct candidate whose kernel reads a plain module-level float: Triton's CPU
    interpreter runs it, no GPU compiles it ("Cannot access global variable")."""
    source = (CANDIDATES / "softmax_autotuned.py").read_text()
    source = source.replace("import triton.language as tl\n", 'import triton.language as tl\n\nNEG_INF = float("-inf")\n')
    path = tmp_path / "softmax_module_float.py"
    path.write_text(source.replace('other=float("-inf")', "other=NEG_INF"))
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict[str, list | str]:
    """check_many's findings for the candidates of the tests below, by name, in one batch:
    a batch, like each `check`, is two processes that import torch and Triton for seconds.
    Through PTX, as the solutions' test compiles: what these find, Triton's steps find."""
    tmp = tmp_path_factory.mktemp("batch")
    softmax, rms = operators.load("aten::softmax"), operators.load("vllm::rms_norm")
    crashing = tmp / "crashes.py"
    crashing.write_text("import triton\n\ndef softmax_int(self, dim, dtype=None):\n    raise ValueError('boom')\n")
    pairs = {"solution": (softmax.path, softmax.solution_path), "module float": (softmax.path, reading_a_module_float(tmp)),
             "crashing": (softmax.path, crashing), "autotuned": (softmax.path, CANDIDATES / "softmax_autotuned.py"),
             "other op": (rms.path, rms.solution_path)}
    return dict(zip(pairs, check_many(list(pairs.values()), assemble=False), strict=True))


def test_a_kernel_reading_a_module_float_passes_the_interpreter_but_not_the_gpu_compiler(tmp_path, batch):
    spec = operators.load("aten::softmax")
    candidate = reading_a_module_float(tmp_path)
    assert "other=NEG_INF" in candidate.read_text()
    assert evaluate(candidate.read_text(), spec, EvalSettings(device="cpu", case_tags=("smoke",))).correct
    results = batch["module float"]  # the same candidate, built for sm_90 in the batch
    assert results and all(error is not None for _, error in results)
    assert "global" in results[0][1].lower()


def test_a_batch_keeps_each_candidates_findings_apart(batch):
    """check_many: one pair's compile error or failed interpreter run is that pair's only."""
    good, bad, crashed, other = (batch[name] for name in ("solution", "module float", "crashing", "other op"))
    assert good and all(error is None for _, error in good)
    assert bad and all(error is not None and "global" in error.lower() for _, error in bad)
    assert isinstance(crashed, str) and "boom" in crashed
    assert other and all(error is None for _, error in other)


@pytest.mark.slow
def test_with_compile_for_a_cpu_evaluation_reports_the_gpu_compile_error(tmp_path):
    spec = operators.load("aten::softmax")
    settings = EvalSettings(device="cpu", case_tags=("smoke",), compile_for=90)
    bad = evaluate(reading_a_module_float(tmp_path).read_text(), spec, settings)
    assert bad.status == Status.COMPILE_ERROR
    assert "correct in the CPU interpreter" in bad.message and "sm_90" in bad.message
    # the interpreter's run stays on the record: its cases, sandbox and where its time went
    assert bad.cases and bad.sandbox and "candidate" in bad.phase_s and bad.harness_s
    assert evaluate(spec.solution_path.read_text(), spec, settings).correct


def test_every_launch_is_recorded_with_its_types_and_constexprs(batch):
    results = batch["solution"]
    assert results and all(error is None for _, error in results)
    launch = results[0][0]
    signature = dict(launch.signature)
    assert launch.kernel == "_softmax_rows"
    assert signature["x_ptr"].startswith("*") and signature["n_cols"] == "i32"
    assert signature["BLOCK"] == "constexpr" and dict(launch.constexprs)["BLOCK"] >= 1


def test_an_autotuned_kernel_is_compiled_with_its_config(batch):
    results = batch["autotuned"]
    assert results and all(error is None for _, error in results)
    assert all(dict(launch.options)["num_warps"] == 4 for launch, _ in results)  # its first config


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("source", operators.SOURCES)
def test_every_solution_compiles_for_sm90(source):
    """Each solution's smoke-case launches build for the H100/H200 with Triton's own
    compiler, so a kernel that only the interpreter accepts fails CI, not a GPU run.
    One test per source, its solutions in one batch (`check_many`): xdist runs the
    sources side by side. Through PTX (`assemble=False`): ptxas was a third of these
    compiles on the project's machines; the tests above and `eval.compile_for` run it."""
    ops = [op for op in operators.select(source, None) if operators.load(op).kernel_required]
    assert ops
    specs = [operators.load(op) for op in ops]
    found = []
    for op, results in zip(ops, check_many([(s.path, s.solution_path) for s in specs], assemble=False), strict=True):
        if isinstance(results, str):
            found.append(f"{op}: the interpreter run failed: {results[-400:]}")
        elif not results:
            found.append(f"{op}: no Triton launch recorded")
        else:
            found += [f"{op}: {launch.kernel}: {error[-400:]}" for launch, error in results if error]
    assert not found, "\n".join(found)
