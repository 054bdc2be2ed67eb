"""The judge's fused comparison (kgb.evaluate.comparison_kernels) against the ops it stands in
for (kgb.evaluate.correctness), run by Triton's interpreter, and compiled on a GPU where there is
one: on a GPU the judge compares large outputs with it, and a verdict must not depend on which
of the two compared."""

import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import math
import sys
import torch
from kgb.evaluate import comparison_kernels as ck
from kgb.evaluate.call_audit import digest
from kgb.evaluate.correctness import close_elements
from kgb.operators import Tolerance

def ops_rms(t):
    m = t.double().abs()
    finite = torch.isfinite(m)
    n = int(finite.sum())
    return math.sqrt(float(torch.where(finite, m, 0.0).square().sum()) / n) if n else 0.0

def same(x, y):
    return (math.isnan(x) and math.isnan(y)) or x == y

device = sys.argv[1]
g = torch.Generator().manual_seed(11)
n = 2 * ck.BLOCK + 123  # the last program's block only partly inside
specials = [float("nan"), float("inf"), float("-inf"), 0.0, 1e-30, -0.0]
checked = 0
for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    for noise in (0.0, 1e-4, 3e-2):
        e = torch.randn(n, generator=g, dtype=torch.float64).to(dtype)
        a = (e.double() + noise * torch.randn(n, generator=g, dtype=torch.float64)).to(dtype)
        if noise:
            # special values where both, or one, hold them: matched exactly where e is not finite
            spots = torch.randint(0, n, (24,), generator=g).tolist()
            for i, at in enumerate(spots):
                v = specials[i % len(specials)]
                if i % 3 == 0:
                    a[at] = e[at] = v
                elif i % 3 == 1:
                    e[at] = v
                else:
                    a[at] = v
        a, e = a.to(device), e.to(device)
        for tol in (Tolerance(rtol=1e-2, atol=1e-3), Tolerance(rtol=1.6e-2, atol=1e-5)):
            ok, err, rel = close_elements(a, e, tol)
            got = ck.closeness(a, e, tol.atol, tol.rtol)
            outside = int((~ok).sum())
            assert got.outside == outside, (dtype, noise, got, outside)
            assert got.first == (int((~ok).nonzero()[0, 0]) if outside else None), (dtype, noise, got)
            assert same(got.max_abs, err.max().item()), (dtype, noise, got, err.max().item())
            assert same(got.max_rel, rel.max().item()), (dtype, noise, got, rel.max().item())
            checked += 1
        # summed in another order: equal but for a float64's last bits
        assert math.isclose(ck.root_mean_square(e), ops_rms(e), rel_tol=1e-12), (dtype, ck.root_mean_square(e))
assert ck.root_mean_square(torch.full((5,), float("nan"), device=device)) == 0.0
# the untouched-input check: exact, NaN equal to NaN, -0.0 equal to 0.0, as same_bits by the ops
for dtype in ck.EXACT_DTYPES:
    if dtype.is_floating_point:
        was = torch.randn(n, generator=g, dtype=torch.float64).to(dtype)
        was[[5, 70, n - 1]] = torch.tensor([float("nan"), float("inf"), 0.0], dtype=dtype)
    else:
        was = torch.randint(-100 if dtype != torch.uint8 else 0, 100, (n,), generator=g).to(dtype)
    was = was.to(device)
    after = was.clone()
    assert ck.differing(after, was) == 0, dtype
    if dtype.is_floating_point:
        after[n - 1] = -0.0
        assert ck.differing(after, was) == 0, dtype
    after[[3, ck.BLOCK + 1, n - 2]] += 1  # in three programs' blocks, the last one partly inside
    assert ck.differing(after, was) == 3, dtype
    assert ck.differing(was, after) == 3, dtype
    checked += 1
# the audit's digest of a call's outputs: the same counts, the magnitudes summed in another order
for dtype in ck.FUSED_DTYPES:
    for specials_in in (0, 40):
        t = torch.randn(n, generator=g, dtype=torch.float64).to(dtype)
        spots = torch.randint(0, n, (specials_in,), generator=g).tolist()
        for i, at in enumerate(spots):
            t[at] = specials[i % len(specials)]
        t = t.to(device)
        by_ops = digest([t])[0].tolist()  # the ops: n is under the size the judge fuses from
        fused_row = ck.digested(t).tolist()
        assert fused_row[:2] == by_ops[:2], (dtype, fused_row, by_ops)
        assert math.isclose(fused_row[2], by_ops[2], rel_tol=1e-12), (dtype, fused_row, by_ops)
        checked += 1
assert ck.digested(torch.full((5,), float("nan"), device=device)).tolist() == [5.0, 5.0, 0.0]
ck.warm_up(device)  # every dtype it takes, compiled and run
print("compared", checked)
"""


def test_the_fused_comparison_finds_what_the_ops_find():
    """Every dtype it takes, with NaN, infinities, zeros and tiny values in either tensor:
    the same count outside tolerance, the same first index, the same maxima (NaN where an
    error is NaN), the same scale but for its last bits; the exact check of an untouched
    input, over integers too, counts what differs; and the audit's digest of an output has the
    same counts and the same sum of magnitudes but for its last bits."""
    _run_on("cpu", interpret=True)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_the_fused_comparison_compiled_for_a_gpu_finds_what_the_ops_find():
    """The same, compiled and run on a GPU, where the judge uses it."""
    _run_on("cuda", interpret=False)


def _run_on(device: str, interpret: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    done = subprocess.run([sys.executable, "-c", SCRIPT, device], capture_output=True, text=True, timeout=600,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "compared 41"


def test_only_large_floating_tensors_on_a_gpu_are_fused():
    import torch

    from kgb.evaluate.comparison_kernels import FUSED_FROM_ELEMENTS, exact, fused

    meta = torch.empty(FUSED_FROM_ELEMENTS, device="meta")
    assert not fused(meta)  # only a GPU's
    assert not fused(torch.empty(FUSED_FROM_ELEMENTS))  # the host's
    assert not exact(meta) and not exact(torch.empty(FUSED_FROM_ELEMENTS, dtype=torch.int64))


def test_a_spare_warms_both_specialisations_of_every_kernel_from_a_place_of_its_own(monkeypatch):
    """Triton compiles a length that 16 divides apart from one it does not: a spare loads both
    of every kernel for every dtype, so that no judge's first comparison meets one in its work
    section (the batched GEMMs' odd-length bench outputs did until session 67). Spares begin at
    different places of the list, so that those starting side by side on a host whose cache is
    empty compile different kernels at once."""
    import torch

    from kgb.evaluate import comparison_kernels as ck

    launched = []

    class Kernel:
        def __init__(self, name):
            self.name = name

        def __getitem__(self, grid):
            def launch(*args, **constants):
                length = next(a for a in args if isinstance(a, int))
                launched.append((self.name, args[0].dtype, length % 16 == 0))
                for a in args:  # what a kernel writes: found nothing
                    if isinstance(a, torch.Tensor):
                        a.zero_()
            return launch

    names = ("close", "squares", "differ", "digest")
    monkeypatch.setattr(ck, "_kernels", lambda: ck._Kernels(*(Kernel(n) for n in names)))
    both = (True, False)
    fused = {(k, d, m) for k in ("close", "squares", "digest") for d in ck.FUSED_DTYPES for m in both}
    every = fused | {("differ", d, m) for d in ck.EXACT_DTYPES for m in both}
    firsts = []
    for start in (0, 1, 7, len(every) + 7):
        launched.clear()
        ck.warm_up("cpu", start=start)
        assert set(launched) == every and len(launched) == len(every)
        firsts.append(launched[0])
    assert len(set(firsts[:3])) == 3 and firsts[3] == firsts[2]


def test_a_spare_stops_warming_up_once_its_request_has_come(monkeypatch):
    """At a job's start every trial waits for a spare: one whose request has come leaves the
    comparison kernels it has not warmed to their first use."""
    from kgb.evaluate import comparison_kernels as ck

    ran = []
    monkeypatch.setattr(ck, "_warm_up_calls", lambda device: [lambda i=i: ran.append(i) for i in range(6)])
    assert ck.warm_up("cpu", start=2, until=lambda: len(ran) == 3)  # cut short
    assert ran == [2, 3, 4]
    ran.clear()
    assert not ck.warm_up("cpu", start=0, until=lambda: False)
    assert ran == list(range(6))
