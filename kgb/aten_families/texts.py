"""Members whose words live in a text module (loss_text, matmul_text, rowwise_text,
extremum_text): there, member `name` has NAME_TASK, NAME_SIGNATURES and NAME_REFERENCES
(upper case, without a leading underscore)."""

from __future__ import annotations

from types import ModuleType

from kgb.aten_families.member import Member
from kgb.operators import Case


def member(text: ModuleType, name: str, family: str, version: int, cases: list[Case], solution: str,
           inputs: str = "make_inputs") -> Member:
    """The Member `name` of `family`, its words from `text`; its spec binds `inputs` as make_inputs."""
    key = name.upper().lstrip("_")
    return Member(
        name=name, family=family, version=version, task=getattr(text, f"{key}_TASK"),
        signatures=getattr(text, f"{key}_SIGNATURES"), cases=cases,
        references=getattr(text, f"{key}_REFERENCES"), solution=solution,
        binds={"make_inputs": inputs},
    )
