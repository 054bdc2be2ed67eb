"""The copies family: operators whose whole job is moving elements from one strided layout
to another, with no arithmetic on them. clone, contiguous, copy_, _to_copy and to copy (and
convert) whole tensors; cat, stack and scatter copy tensors into parts of a new one; gather,
index_select, rot90 and select_backward read or write through an index or a flipped stride.

Every solution walks its elements with one N-d walk (kernels/nd_walk.py); the eight that
copy whole tensors also share the converting copy (kernels/copy_into.py), scatter and
gather the strides along the indexed dim (kernels/along_dim.py). The members
differ in everything a model is shown (task text, signatures: copies_text.py), in their
cases (copies_cases.py) and inputs (copies_layout.py, copies_index.py) and in their entry
points (copies_solutions.py)."""

from __future__ import annotations

from kgb.aten_families import copies_text as text
from kgb.aten_families import indexing
from kgb.aten_families.copies_index import (
    cat_inputs,
    gather_inputs,
    index_select_inputs,
    rot90_inputs,
    scatter_inputs,
    select_backward_inputs,
    stack_inputs,
)
from kgb.aten_families.copies_layout import (
    clone_compare,
    clone_inputs,
    contiguous_compare,
    contiguous_inputs,
    copy_inputs,
    to_compare,
    to_copy_compare,
    to_copy_inputs,
    to_inputs,
)
from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1

# the modules whose functions the members' specs bind (copy_ compares as index_put_ does)
SPEC_HELPERS = ("copies_layout", "copies_index", "indexing")


def in_place_compare(actual, expected, case, inputs):
    """copy_ returns self updated in place, as index_put_ does: compared alike."""
    return indexing.compare(actual, expected, case, inputs)


# the converting copy of whole tensors, and the strides along an indexed dim
COPY, ALONG = ["nd_walk", "copy_into"], ["nd_walk", "along_dim"]

# name -> (the spec's make_inputs, its compare (None: the default), the kernel files its
# solution pastes before its own code)
TABLE = {
    "_to_copy": (to_copy_inputs, to_copy_compare, COPY),
    "clone": (clone_inputs, clone_compare, COPY),
    "contiguous": (contiguous_inputs, contiguous_compare, COPY),
    "copy_": (copy_inputs, in_place_compare, COPY),
    "to": (to_inputs, to_compare, COPY),
    "cat": (cat_inputs, None, COPY),
    "stack": (stack_inputs, None, COPY),
    "scatter": (scatter_inputs, None, [*COPY, "along_dim"]),
    "gather": (gather_inputs, None, ALONG),
    "index_select": (index_select_inputs, None, ["nd_walk"]),
    "rot90": (rot90_inputs, None, ["nd_walk"]),
    "select_backward": (select_backward_inputs, None, ["nd_walk"]),
}


def cases(name: str) -> list[Case]:
    # not at the top: engines import this module for its specs and must not hold the cases
    from kgb.aten_families.copies_cases import CASES

    return CASES[name]


def members() -> list[Member]:
    # not at the top: engines import this module for its specs and must not hold the solutions
    from kgb.aten_families.copies_solutions import SOLUTIONS

    out = []
    for name, (make_inputs, compare, kernels) in TABLE.items():
        binds = {"make_inputs": make_inputs.__name__}
        if compare is not None:
            binds["compare"] = compare.__name__
        out.append(Member(
            name=name, family="copies", version=VERSION, task=text.TASKS[name],
            signatures=text.SIGNATURES[name], cases=cases(name), references=text.REFERENCES[name],
            solution=solution(kernels, SOLUTIONS[name]), binds=binds, extra=text.EXTRA.get(name, ""),
        ))
    return out
