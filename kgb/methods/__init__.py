"""Methods: strategies that turn a Problem into candidates.

A method is a class built from its config with one method, `solve(ctx)`, that proposes
candidates through `ctx.evaluate(...)` (and calls `ctx.model` if it uses an LLM). Which
candidate is best is decided by the projections, never by the method. Adding a method is
a module and a YAML naming its class in `_target_`: see docs/adding-a-method.md.

A method that judges what it reads rather than what it writes (`files`: a user's kernel
files; `transfer`: another run's kernels) also has `input_digest(op) -> str`: a digest of
what it will judge for `op`, or a word for its absence ("missing"). It is part of the trial's
key (kgb.identity), so that an edited file is a new trial, judged again, and not a finished
one kept with the old file's verdict.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from kgb.trial import TrialContext


class NoCandidate(Exception):
    """The method has nothing to propose for this operator; the message says why."""


class Method(Protocol):
    def solve(self, ctx: TrialContext) -> None: ...


def input_digest(method: Method, op: str) -> str | None:
    """What `method` reads for `op`, as part of the trial's key; None for a method that reads nothing."""
    digest = getattr(method, "input_digest", None)
    return digest(op) if digest is not None else None


def build(cfg: Any) -> Method:
    """The method that `cfg._target_` names ("package.module.Class"), built with cfg. The
    module is imported here, so that a method's SDK is needed only when that method runs."""
    target = getattr(cfg, "_target_", None)
    module_name, _, class_name = str(target).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"method {getattr(cfg, 'name', '?')!r}: _target_ {target!r} names no class "
                         f"({type(exc).__name__}: {exc})") from exc
    return cls(cfg)
