"""Drawing inputs on the GPU (kgb.evaluate.draws) against drawing them on the host; prints
two tables. Needs a CUDA device.

    python benchmarks/draws.py [--ops all] [--host-ops aten::add,aten::scatter,...]

1. Placement: for every case that is not a bench case, of every operator in --ops, the
   inputs drawn as the judge draws them (the GPU's generator, the GPU as default device)
   against the host draw that came before (the host's generator, inputs moved where the
   spec moves them): each tensor must be on the same kind of device, with the same dtype,
   shape, strides, offset and aliasing. Values differ (another generator), types do not.
2. Time: every bench case's draw on the GPU, and for --host-ops also on the host, in
   seconds (synchronised), with the MB drawn.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb import operators  # noqa: E402
from kgb.evaluate.draws import draw_inputs  # noqa: E402


def host_draw(spec, case, device: str) -> dict[str, Any]:
    return spec.module.make_inputs(case, torch.Generator().manual_seed(case.seed), device)


def shape_of(value: Any, storages: dict[int, int]) -> Any:
    """What must agree between two draws of one case: everything but the values."""
    if isinstance(value, torch.Tensor):
        sid = storages.setdefault(value.untyped_storage().data_ptr(), len(storages))
        return ("tensor", value.device.type, str(value.dtype), tuple(value.shape), value.stride(),
                value.storage_offset(), sid)
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(shape_of(v, storages) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, shape_of(v, storages)) for k, v in sorted(value.items())))
    return type(value).__name__


def timed(draw) -> tuple[float, dict]:
    torch.cuda.synchronize()
    started = time.perf_counter()
    inputs = draw()
    torch.cuda.synchronize()
    return time.perf_counter() - started, inputs


def megabytes(inputs: dict) -> float:
    seen, total = set(), 0
    for v in inputs.values():
        for t in (v if isinstance(v, list | tuple) else [v]):
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in seen:
                seen.add(t.untyped_storage().data_ptr())
                total += t.untyped_storage().nbytes()
    return total / 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="all")
    parser.add_argument("--host-ops", default="aten::add,aten::scatter,aten::le,aten::softmax,aten::mm,"
                        "vllm::ggml_moe_a8,cublas::cublasSgemm_v2")
    args = parser.parse_args()
    ops = list(operators.discover()) if args.ops == "all" else args.ops.split(",")
    host_ops = set(args.host_ops.split(",")) if args.host_ops else set()
    differ, checked = [], 0
    print("| operator | case | placement |\n|---|---|---|")
    for op in ops:
        spec = operators.load(op)
        for case in (c for c in spec.cases if c.tag != "bench"):
            checked += 1
            try:
                ours = shape_of(draw_inputs(spec, case, case.seed, "cuda"), {})
                before = shape_of(host_draw(spec, case, "cuda"), {})
            except Exception as exc:  # noqa: BLE001 - reported, and the sweep goes on
                differ.append(op)
                print(f"| {op} | {case.name} | raised {type(exc).__name__}: {str(exc)[:160]} |", flush=True)
                continue
            if ours != before:
                differ.append(op)
                print(f"| {op} | {case.name} | differs: GPU draw {ours} against host draw {before} |", flush=True)
    print(f"\n{checked} cases of {len(ops)} operators; {len(differ)} differ or raise "
          f"({', '.join(sorted(set(differ))) or 'none'})\n", flush=True)
    print("| operator | bench case | MB | GPU draw s | host draw s |\n|---|---|---|---|---|")
    for op in ops:
        spec = operators.load(op)
        for case in (c for c in spec.cases if c.tag == "bench"):
            try:
                on_gpu, inputs = timed(lambda spec=spec, case=case: draw_inputs(spec, case, case.seed, "cuda"))
                on_host = "-"
                if op in host_ops:
                    seconds, before = timed(lambda spec=spec, case=case: host_draw(spec, case, "cuda"))
                    on_host = f"{seconds:.2f}"
                    if shape_of(before, {}) != shape_of(inputs, {}):
                        on_host += " (placement differs)"
                    del before
                print(f"| {op} | {case.name} | {megabytes(inputs):.0f} | {on_gpu:.3f} | {on_host} |", flush=True)
                del inputs
            except Exception as exc:  # noqa: BLE001
                print(f"| {op} | {case.name} | - | raised {type(exc).__name__}: {str(exc)[:160]} | - |", flush=True)
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
