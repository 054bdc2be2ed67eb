"""A case's inputs, drawn on the device they are judged on.

Every case's inputs come from its spec's `make_inputs(case, gen, device)` with a generator
seeded for that draw alone (the case's own seed, or a secret one; never the global RNG).
The generator is the judged device's, and the draw runs with that device as torch's
default, so a spec's random and plain factories (`torch.randn(shape, generator=gen)`,
`torch.arange(n)`) make their tensors there. On a GPU that turns the host's serial work into
milliseconds: aten::scatter's onehot bench case took 36 s to draw on the project's CPU
machine, and drawing was a quarter of all evaluation time on the H200 (session 16).

An input a spec means to live on the host says so (`.to("cpu")`, `device="cpu"`): vLLM's
swap_blocks takes its block mapping there, aten::add has a host scalar operand.
`benchmarks/draws.py`, on a GPU host, checks every spec's inputs land where its host draw
puts them, with the same dtypes and layouts.

The values depend on the device's generator: a case's inputs on the H200 are not the ones
the CPU draws for it, and each is the same in every evaluation on its device.
"""

from __future__ import annotations

from typing import Any

import torch

from kgb.operators import Case, Spec


def draw_inputs(spec: Spec, case: Case, seed: int, device: str) -> dict[str, Any]:
    gen = torch.Generator(device=device).manual_seed(seed)
    with torch.device(device):
        return spec.module.make_inputs(case, gen, device)
