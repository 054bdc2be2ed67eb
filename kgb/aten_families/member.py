"""What a family says about each of its operators: everything the generator writes into
`operators/aten/<name>/spec.py` and `solution.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kgb.operators import Case


@dataclass(frozen=True)
class Member:
    """One ATen operator as its family describes it.

    `cases` are what the family's `cases(name)` returns. `binds` maps the spec's names (`make_inputs`,
    `compare`) to the family functions it takes as they are. `references` is the source of
    the spec's reference functions, written into the spec so that a method shown the
    reference reads the ATen call itself. `solution` is
    the whole text of the known-good Triton file. `extra` holds further module-level
    assignments of the spec (`INOUT_ARGS = ...`), written after the signatures.
    """

    name: str
    family: str
    version: int
    task: str
    signatures: str
    cases: list[Case]
    references: str
    solution: str
    binds: Mapping[str, str] = field(default_factory=lambda: {"make_inputs": "make_inputs"})
    extra: str = ""
