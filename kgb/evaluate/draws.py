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
the CPU draws for it, and each is the same in every evaluation on its device. So a candidate
process given the spec draws a bench case's inputs again from its seed (`redraw`) where the
judge would have sent hundreds of MB, and the two compare checksums of every storage
(`digest`) instead of bytes (docs/design/evaluation.md, judge v11).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from kgb.evaluate.correctness import clone_exact, poison_
from kgb.operators import Case, Spec


def draw_inputs(spec: Spec, case: Case, seed: int, device: str) -> dict[str, Any]:
    gen = torch.Generator(device=device).manual_seed(seed)
    with torch.device(device):
        return spec.module.make_inputs(case, gen, device)


def candidate_copy(spec: Spec, inputs: dict[str, Any]) -> dict[str, Any]:
    """The copy of a draw that a candidate gets: every storage its own, pure outputs
    poisoned (a spec makes them with torch.empty, whose bytes are whatever the allocator
    held: they would differ between the judge and a process that draws again)."""
    return _poisoned(spec, clone_exact(inputs))


def _poisoned(spec: Spec, inputs: dict[str, Any]) -> dict[str, Any]:
    for name, t in inputs.items():
        if name in spec.output_args and isinstance(t, torch.Tensor):
            poison_(t)
    return inputs


@dataclass
class TimingDraws:
    """A bench case's two draws for its timing: set T from the case's own seed (the timed
    calls), set V from a secret one (the answers checked after timing), each as drawn and as
    the candidate's copy."""
    timed: dict[str, Any]
    check: dict[str, Any]
    cand_t: dict[str, Any]
    cand_v: dict[str, Any]


def timing_draws(spec: Spec, case: Case, seeds: tuple[int, int], device: str) -> TimingDraws:
    timed = draw_inputs(spec, case, seeds[0], device)
    check = draw_inputs(spec, case, seeds[1], device)
    return TimingDraws(timed, check, candidate_copy(spec, timed), candidate_copy(spec, check))


def message_value(spec: Spec, case: Case, copies: list[dict[str, Any]]) -> dict[str, Any]:
    """The value of the judge's message with the candidate's copies bound to the entry
    point's arguments: a "call" (one copy) or a "time" (sets T and V). A candidate process
    that draws the copies again from their seeds (`redraw`) builds the same value, and both
    number its storages alike (kgb.evaluate.tensor_storage.storages_in)."""
    entry = spec.entry_of(case)
    return bound_value([entry.bind(c) for c in copies])


def bound_value(bound: list[tuple[tuple, dict]]) -> dict[str, Any]:
    """The value of a "call" (one (args, kwargs)) or a "time" (sets T and V): the one shape
    the judge sends and a redrawing candidate process rebuilds."""
    sets = [{"args": list(a), "kwargs": k} for a, k in bound]
    return sets[0] if len(sets) == 1 else {"sets": sets}


def redraw(spec: Spec, case: Case, seeds: tuple[int, ...], device: str) -> dict[str, Any]:
    """In a candidate process: the value of the message the judge would have sent for these
    seeds, drawn here. A draw whose tensors each have a storage of their own is already
    laid out as its copy would be, and serves as it (a bench case's copy would double the
    GPU memory the draw takes, for a moment); one that shares a storage is copied."""
    copies = []
    for seed in seeds:
        drawn = draw_inputs(spec, case, seed, device)
        copies.append(candidate_copy(spec, drawn) if _storages_shared(drawn) else _poisoned(spec, drawn))
    return message_value(spec, case, copies)


def _storages_shared(value: Any) -> bool:
    """Whether two tensors in `value` share a storage (clone_exact gives each its own)."""
    seen: set[int] = set()

    def shared(v: Any) -> bool:
        if isinstance(v, torch.Tensor):
            key = v.untyped_storage()._cdata
            if key in seen:
                return True
            seen.add(key)
            return False
        if isinstance(v, Mapping):
            return any(shared(x) for x in v.values())
        if isinstance(v, list | tuple):
            return any(shared(x) for x in v)
        return False

    return shared(value)


def warm_up(device: str) -> None:
    """Load the kernels `digest` uses, which a process loads at their first use (tens of
    milliseconds on the H200), before any request waits for them."""
    if device != "cpu":
        digest(torch.arange(64, dtype=torch.int32, device=device).untyped_storage())


# Sums of this many 4-byte words at a time: a few tens of MB of temporaries on the device.
_DIGEST_WORDS = 4 << 20


def digest(storage: torch.UntypedStorage) -> str:
    """A checksum of a storage's bytes, computed where it lives, which two processes compare
    instead of moving the bytes: the sum of its 4-byte words and a sum weighted by position
    (a shuffle, such as an unstable sort's, changes that one). It catches a draw that came
    out differently (a make_inputs with a nondeterministic GPU op); it is no defence against
    a forger, and needs none: what a candidate process computes on inputs of its own is
    checked against the reference on the judge's."""
    flat = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)
    whole = flat.numel() // 4 * 4
    words = flat[:whole].view(torch.int32)
    weights = (torch.arange(min(_DIGEST_WORDS, words.numel()), device=flat.device, dtype=torch.int64) % 251) + 1
    total = torch.zeros((), dtype=torch.int64, device=flat.device)
    weighted = torch.zeros((), dtype=torch.int64, device=flat.device)
    for chunk in words.split(_DIGEST_WORDS):
        wide = chunk.to(torch.int64)
        total += wide.sum()
        weighted += (wide * weights[:wide.numel()]).sum()
    tail = flat[whole:].tolist()
    return f"{flat.numel()}:{int(total)}:{int(weighted)}:{bytes(tail).hex()}"
