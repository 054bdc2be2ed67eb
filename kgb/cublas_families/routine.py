"""What a family says about each of its routines: everything the generator writes into
`operators/cublas/<name>/spec.py` and `solution.py`."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgb.operators import Case


@dataclass(frozen=True)
class Routine:
    """One cuBLAS routine as a family describes it.

    `reference` and `compare` name functions of the family module, bound in the spec as
    they are (so a method that may see the reference sees its real source). `solution` is
    the whole text of the known-good Triton file.
    """

    name: str
    family: str
    version: int
    task: str
    signature: str
    cases: list[Case]
    reference: str
    solution: str
    inout: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    compare: str | None = None
    pointer_mode: str = "host"  # where the routine's scalars and results live
    extra: dict = field(default_factory=dict)


def case(name: str, tag: str, reduction: int = 1, seed: int = 0, **params) -> Case:
    """A Case whose params are the keywords (shorter to read in the family tables)."""
    return Case(name, tag, params, seed=seed, reduction=max(reduction, 1))
