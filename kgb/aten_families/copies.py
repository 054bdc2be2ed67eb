"""The copies family: operators whose whole job is moving elements from one strided layout
to another, with no arithmetic on them. clone, contiguous, copy_, _to_copy and to copy (and
convert) whole tensors; cat, stack and scatter copy tensors into parts of a new one; gather,
index_select, rot90 and select_backward read or write through an index or a flipped stride.

Every solution walks its elements with one N-d walk (kernels/nd_walk.py); the eight that
copy whole tensors also share the converting copy (kernels/copy_into.py). The members
differ in everything a model is shown (task text, signatures: copies_text.py), in their
cases and inputs (copies_layout.py, copies_index.py) and in their entry points
(copies_solutions.py)."""

from __future__ import annotations

from kgb.aten_families import copies_index as index
from kgb.aten_families import copies_layout as layout
from kgb.aten_families import copies_text as text
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
    copy_compare,
    copy_inputs,
    to_compare,
    to_copy_compare,
    to_copy_inputs,
    to_inputs,
)
from kgb.aten_families.copies_solutions import SOLUTIONS
from kgb.aten_families.member import Member
from kgb.aten_families.source import solution
from kgb.operators import Case

VERSION = 1

# the modules whose functions the members' specs bind
SPEC_HELPERS = ("copies_layout", "copies_index")

# name -> (cases, the spec's make_inputs, its compare (None: the default), whether the
# solution pastes the converting copy)
TABLE = {
    "_to_copy": (layout.TO_COPY_CASES, to_copy_inputs, to_copy_compare, True),
    "clone": (layout.CLONE_CASES, clone_inputs, clone_compare, True),
    "contiguous": (layout.CONTIGUOUS_CASES, contiguous_inputs, contiguous_compare, True),
    "copy_": (layout.COPY_CASES, copy_inputs, copy_compare, True),
    "to": (layout.TO_CASES, to_inputs, to_compare, True),
    "cat": (index.CAT_CASES, cat_inputs, None, True),
    "stack": (index.STACK_CASES, stack_inputs, None, True),
    "scatter": (index.SCATTER_CASES, scatter_inputs, None, True),
    "gather": (index.GATHER_CASES, gather_inputs, None, False),
    "index_select": (index.INDEX_SELECT_CASES, index_select_inputs, None, False),
    "rot90": (index.ROT90_CASES, rot90_inputs, None, False),
    "select_backward": (index.SELECT_BACKWARD_CASES, select_backward_inputs, None, False),
}


def cases(name: str) -> list[Case]:
    return TABLE[name][0]


def members() -> list[Member]:
    out = []
    for name, (member_cases, make_inputs, compare, copies_whole) in TABLE.items():
        binds = {"make_inputs": make_inputs.__name__}
        if compare is not None:
            binds["compare"] = compare.__name__
        kernels = ["nd_walk", "copy_into"] if copies_whole else ["nd_walk"]
        out.append(Member(
            name=name, family="copies", version=VERSION, task=text.TASKS[name],
            signatures=text.SIGNATURES[name], cases=member_cases, references=text.REFERENCES[name],
            solution=solution(kernels, SOLUTIONS[name]), binds=binds, extra=text.EXTRA.get(name, ""),
        ))
    return out
