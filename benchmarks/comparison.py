"""How long the judge takes to compare a large floating output with the reference's, by PyTorch's
ops a chunk at a time or by the fused kernels (kgb.evaluate.comparison_kernels); prints a table.

    python benchmarks/comparison.py [--millions 4,32,256] [--repeats 5] [--busy 0,4]

Sizes may be fractions of a million (`--millions 0.0625,1`): below
`comparison_kernels.FUSED_FROM_ELEMENTS` the judge compares by the ops, and this benchmark's
"fused" column forces the kernels there, to show where the threshold should lie.

For each dtype, size and number of busy processes: the median wall time of
`correctness.compare_tensor` (the tolerance's scale included) each way, and whether the two agree
(the count outside tolerance, the maxima). `--busy N` starts N processes that keep the GPU busy
with small kernels meanwhile, as a first job's other judges do: a process's kernels then take
turns with theirs. Last, the fused kernels' first use in a fresh process, their binaries already
in Triton's cache, as each judge meets it. Beside them, the check of an input that must be left
untouched (`correctness.same_bits`), each way, on a tensor of the same size; and the audit's digest
of what a timed call wrote (`call_audit.digest`), each way, its wait for the GPU included.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kgb.evaluate import call_audit, comparison_kernels, correctness  # noqa: E402

DTYPES = (torch.bfloat16, torch.float32)
BUSY = """
import sys, time, torch
x = torch.randn(1 << 16, device="cuda")
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for _ in range(200):
        x.mul_(1.0000001)
    torch.cuda.synchronize()
"""
FIRST_USE = """
import sys, time, torch
sys.path.insert(0, sys.argv[1])
from kgb.evaluate import correctness
e = torch.randn(1 << 22, device="cuda", dtype=getattr(torch, sys.argv[2]))
torch.cuda.synchronize()
a = e.clone()
spent = []
for _ in range(2):
    began = time.perf_counter()
    correctness.compare_tensor("out", a, e, 1)
    spent.append(time.perf_counter() - began)
print(f"first {spent[0]:.4f}, second {spent[1]:.4f}")
"""


def timed(call, by_ops: bool, repeats: int) -> tuple[float, object]:
    """The median seconds of `call()` and what its last run returned, by PyTorch's ops or by the
    kernels (forced at any size: the judge's threshold set past every tensor, or to 0)."""
    saved = comparison_kernels.FUSED_FROM_ELEMENTS
    comparison_kernels.FUSED_FROM_ELEMENTS = 1 << 62 if by_ops else 0
    try:
        times, found = [], None
        for _ in range(repeats):
            torch.cuda.synchronize()
            began = time.perf_counter()
            found = call()
            times.append(time.perf_counter() - began)
    finally:
        comparison_kernels.FUSED_FROM_ELEMENTS = saved
    return statistics.median(times), found


def compare(a: torch.Tensor, e: torch.Tensor, by_ops: bool, repeats: int) -> tuple[float, tuple]:
    """The median seconds of one comparison, and what it found (message or None, the maxima)."""
    return timed(lambda: correctness.compare_tensor("out", a, e, 1), by_ops, repeats)


def untouched(e: torch.Tensor, by_ops: bool, repeats: int) -> float:
    """The median seconds of `correctness.same_bits` on an input left as it was sent: the check
    each argument a call must not write gets, beside the comparison of its outputs."""
    was = e.clone()
    seconds, same = timed(lambda: correctness.same_bits(e, was), by_ops, repeats)
    assert same, "an untouched copy compared as changed"
    return seconds


def digests(e: torch.Tensor, by_ops: bool, repeats: int) -> tuple[float, list[float]]:
    """The median seconds of the audit's digest of an output, the wait for the GPU included (the
    judge does not wait for it: its kernels are queued between timed calls), and its row."""
    def digest_done():
        row = call_audit.digest([e])[0]
        torch.cuda.synchronize()
        return row
    seconds, row = timed(digest_done, by_ops, repeats)
    return seconds, row.tolist()


def agree(x: tuple, y: tuple) -> bool:
    """The same verdict, and maxima equal but for a float64's last bits (the scale is summed in
    another order)."""
    def close(p, q):
        return (p is None and q is None) or (math.isnan(p) and math.isnan(q)) or math.isclose(p, q, rel_tol=1e-9)
    return (x[0] is None) == (y[0] is None) and close(x[1], y[1]) and close(x[2], y[2])


def _elements(n: int) -> str:
    return f"{n >> 20}M" if n % (1 << 20) == 0 else f"{n >> 10}K" if n % (1 << 10) == 0 else str(n)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--millions", default="4,32,256", help="sizes, in millions of elements")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--busy", default="0,4", help="processes keeping the GPU busy meanwhile")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU visible to torch here: this benchmark measures one", file=sys.stderr)
        return 2
    # the judge's Triton cache is its own: here one of this run's, filled by the first comparison
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kgb-comparison-cache-"))
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, median of {args.repeats}\n")
    print("| dtype | elements | busy processes | by the ops (s) | fused (s) | ratio | agree "
          "| same_bits by the ops (s) | fused (s) | digest by the ops (s) | fused (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for busy in [int(b) for b in args.busy.split(",")]:
        for dtype in DTYPES:
            for millions in args.millions.split(","):
                n = int(float(millions) * (1 << 20))
                e = torch.randn(n, device="cuda").to(dtype)
                a = (e.float() + 1e-3 * torch.randn(n, device="cuda")).to(dtype)
                a[n // 3] = float("nan")  # one element outside tolerance: the message's path too
                compare(a, e, by_ops=False, repeats=1)  # compiled or loaded, and warmed up
                others = [subprocess.Popen([sys.executable, "-c", BUSY, "600"]) for _ in range(busy)]
                try:
                    time.sleep(3.0 if busy else 0.0)  # their CUDA up and their kernels running
                    by_ops, ops_found = compare(a, e, by_ops=True, repeats=args.repeats)
                    fused_s, fused_found = compare(a, e, by_ops=False, repeats=args.repeats)
                    same_ops, same_fused = untouched(e, True, args.repeats), untouched(e, False, args.repeats)
                    (digest_ops, row_ops), (digest_fused, row_fused) = (digests(a, True, args.repeats),
                                                                        digests(a, False, args.repeats))
                finally:
                    for p in others:
                        p.kill()
                        p.wait()
                agreed = agree(ops_found, fused_found) and row_ops[:2] == row_fused[:2] and math.isclose(
                    row_ops[2], row_fused[2], rel_tol=1e-9)
                print(f"| {str(dtype).removeprefix('torch.')} | {_elements(n)} | {busy} | {by_ops:.4f} | {fused_s:.4f} "
                      f"| {by_ops / fused_s:.1f}x | {'yes' if agreed else 'NO'} | {same_ops:.4f} | {same_fused:.4f} "
                      f"| {digest_ops:.4f} | {digest_fused:.4f} |", flush=True)
                del a, e
                torch.cuda.empty_cache()
    print("\nthe fused comparison of 4M elements in a fresh process, its binary in the cache (s):\n")
    for dtype in DTYPES:
        name = str(dtype).removeprefix("torch.")
        done = subprocess.run([sys.executable, "-c", FIRST_USE, str(ROOT), name], capture_output=True, text=True,
                              env=dict(os.environ))
        print(f"  {name}: {done.stdout.strip() or done.stderr.strip()[-300:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
