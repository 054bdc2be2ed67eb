"""Methods: strategies that turn a Problem into candidates.

A method is a class built from its config with one method, `solve(ctx)`, that proposes
candidates through `ctx.evaluate(...)` (and calls `ctx.model` if it uses an LLM). Which
candidate is best is decided by the projections, never by the method. Adding a method is
one module and one line in METHODS: see docs/adding-a-method.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kgb.trial import TrialContext


class NoCandidate(Exception):
    """The method has nothing to propose for this operator; the message says why."""


class Method(Protocol):
    def solve(self, ctx: TrialContext) -> None: ...


def _expert(cfg: Any) -> Method:
    from kgb.methods.expert import Expert

    return Expert(cfg)


def _files(cfg: Any) -> Method:
    from kgb.methods.files import Files

    return Files(cfg)


def _transfer(cfg: Any) -> Method:
    from kgb.methods.transfer import Transfer

    return Transfer(cfg)


def _oneshot(cfg: Any) -> Method:
    from kgb.methods.oneshot import Oneshot

    return Oneshot(cfg)


def _passk(cfg: Any) -> Method:
    from kgb.methods.passk import Passk

    return Passk(cfg)


def _refine(cfg: Any) -> Method:
    from kgb.methods.refine import Refine

    return Refine(cfg)


def _coding_agent(cfg: Any) -> Method:
    from kgb.methods.coding_agent import CodingAgent

    return CodingAgent(cfg)


def _iterative(cfg: Any) -> Method:
    from kgb.methods.iterative import Iterative

    return Iterative(cfg)


def _autokernel(cfg: Any) -> Method:
    from kgb.methods.autokernel import Autokernel

    return Autokernel(cfg)


def _aiko(cfg: Any) -> Method:
    from kgb.methods.aiko import Aiko

    return Aiko(cfg)


def _cuda_optimized_skill(cfg: Any) -> Method:
    from kgb.methods.cuda_optimized_skill import CudaOptimizedSkill

    return CudaOptimizedSkill(cfg)


# name -> factory(config). Factories import lazily so that a method's SDK is needed only
# when that method runs.
METHODS: dict[str, Callable[[Any], Method]] = {
    "expert": _expert,
    "files": _files,
    "transfer": _transfer,
    "oneshot": _oneshot,
    "passk": _passk,
    "refine": _refine,
    # agent methods (kgb/agents/: workspace, check tool, drivers, budgets)
    "claude_code": _coding_agent,
    "opencode": _coding_agent,
    "iterative": _iterative,
    "autokernel": _autokernel,
    "aiko": _aiko,
    "ako4all": _aiko,
    "cuda_optimized_skill": _cuda_optimized_skill,
}


def build(cfg: Any) -> Method:
    if cfg.name not in METHODS:
        raise ValueError(f"unknown method {cfg.name!r}; known: {', '.join(sorted(METHODS))}")
    return METHODS[cfg.name](cfg)
