"""What keeping bench draws between evaluations saves (kgb.evaluate.draws); prints a table.

    python benchmarks/draws.py [--ops aten::add,...] [--device cpu]

For every bench case of the chosen operators: the time to draw its inputs from the case's
seed (what every evaluation paid before), the time of the draw that keeps them (the second
evaluation's: draw, copy to the host, write), and the time to load them (every later
evaluation's), with the bytes kept. The folder is a fresh temporary one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import operators  # noqa: E402
from kgb.evaluate.draws import DrawCache  # noqa: E402
from kgb.evaluate.judge import draw_inputs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="aten::add,aten::softmax,vllm::rms_norm")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    print("| operator | bench case | draw s | draw and keep s | load s | MB kept |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="kgb-draws-bench-") as folder:
        cache = DrawCache(folder)
        for op in args.ops.split(","):
            spec = operators.load(op)
            for case in (c for c in spec.cases if c.tag == "bench"):
                def draw(case=case, spec=spec):
                    return draw_inputs(spec, case, case.seed, args.device)

                times = []
                for _ in range(3):  # draws, then draws and keeps, then loads
                    started = time.perf_counter()
                    cache.inputs(spec, case, case.seed, args.device, draw)
                    times.append(time.perf_counter() - started)
                kept = sum(p.stat().st_size for p in Path(folder).glob("*.draw"))
                print(f"| {op} | {case.name} | {times[0]:.2f} | {times[1]:.2f} | {times[2]:.2f} | {kept / 1e6:.0f} |",
                      flush=True)
                for p in Path(folder).glob("*.draw"):
                    p.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
