"""The operator dataset: discovery and loading of `operators/<source>/<op>/`.

Each operator folder holds `spec.py` (the question) and `solution.py` (a known-good
answer, never shown to methods). This module turns a spec file into a typed `Spec`, and a
`Spec` into the `Problem` a method may see. The contract of spec.py is documented in
docs/adding-an-operator.md.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from kgb import syntax

REPO_ROOT = Path(__file__).resolve().parent.parent
OPERATORS_DIR = REPO_ROOT / "operators"
SOURCES = ("aten", "vllm", "cublas")


class CaseTag(StrEnum):
    """What a case is for: `smoke` runs in the CPU interpreter, `check` is the full
    correctness set on a GPU, `bench` is timed."""

    SMOKE = "smoke"
    CHECK = "check"
    BENCH = "bench"


@dataclass(frozen=True)
class Case:
    """One input configuration of an operator.

    `params` is free-form data that the spec's `make_inputs` reads (shapes, dtypes,
    scalars). `reduction` is the length of the longest reduction that produces one output
    element (K for a GEMM, the row length for a softmax); it scales the absolute tolerance.
    `entry` names the entry point the case calls; None means the spec's only one.
    """

    name: str
    tag: CaseTag | str
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    reduction: int = 1
    entry: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tag", CaseTag(self.tag))


@dataclass(frozen=True)
class Tolerance:
    """Elementwise closeness: |actual - expected| <= atol + rtol * |expected|."""

    rtol: float
    atol: float


# The published rtol per dtype (docs/operators.md); integers and bool compare exactly.
PUBLISHED_RTOL = {
    "float16": 1e-3,
    "bfloat16": 0.016,
    "float32": 1e-5,
    "float64": 1e-5,
    "complex64": 1.3e-6,
    "complex128": 1e-6,
}
# Published atol is 1e-4 x the reduction length K, an absolute figure for unit-scale
# inputs. kgb states it scale-free as 1e-4 x sqrt(K) x RMS(expected): on unit-scale random
# data a K-term sum has RMS sqrt(K), so both agree there, and an all-zero answer can only
# pass for K >= 1e8. See docs/design/tolerance.md.
ATOL_FACTOR = 1e-4


def published_tolerance(dtype_name: str, reduction: int, scale: float) -> Tolerance:
    """The tolerance for an output of this dtype, reduction length and RMS `scale`."""
    if dtype_name not in PUBLISHED_RTOL:
        return Tolerance(rtol=0.0, atol=0.0)
    return Tolerance(
        rtol=PUBLISHED_RTOL[dtype_name],
        atol=ATOL_FACTOR * math.sqrt(max(reduction, 1)) * scale,
    )


class SpecError(ValueError):
    """A spec.py that breaks the operator contract."""


@dataclass(frozen=True)
class Signature:
    """One entry point a candidate must define, parsed from the spec's SIGNATURES stubs."""

    name: str
    text: str
    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]

    def bind(self, inputs: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Split named inputs into the positional and keyword arguments of a call."""
        unknown = set(inputs) - set(self.positional) - set(self.keyword_only)
        if unknown:
            raise SpecError(f"{self.name}: make_inputs returned unknown arguments {sorted(unknown)}")
        args = tuple(inputs[n] for n in self.positional if n in inputs)
        kwargs = {n: inputs[n] for n in self.keyword_only if n in inputs}
        return args, kwargs


@dataclass(frozen=True)
class Spec:
    """A loaded operator spec: the question, its cases and how to judge answers."""

    source: str
    name: str
    path: Path
    version: int
    task: str
    signatures: dict[str, Signature]
    cases: tuple[Case, ...]
    module: ModuleType = field(repr=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.source}::{self.name}"

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def solution_path(self) -> Path:
        return self.folder / "solution.py"

    def solution_module(self) -> ModuleType:
        """The operator's reference solution, imported into this process: the project's own
        code, for benchmarks; a candidate's source is never imported so (kgb.evaluate)."""
        return _import_file(self.solution_path, f"solution_{self.folder.parent.name}_{self.folder.name}")

    @property
    def digest(self) -> str:
        """Hash of spec.py's text: recorded in RunStarted so results name the exact spec."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]

    def cases_for(self, tags: set[CaseTag]) -> list[Case]:
        return [c for c in self.cases if c.tag in tags]

    def entry_of(self, case: Case) -> Signature:
        if case.entry is None:
            if len(self.signatures) != 1:
                raise SpecError(f"{self.id}: case {case.name} must name its entry point")
            return next(iter(self.signatures.values()))
        return self.signatures[case.entry]

    # The optional hooks below have defaults so that a plain elementwise spec stays short.
    def reference_for(self, entry: str) -> Callable[..., Any]:
        ref = self.module.reference
        return ref[entry] if isinstance(ref, Mapping) else ref

    @property
    def output_args(self) -> tuple[str, ...]:
        """Arguments that are pure outputs: poisoned before the call, compared after."""
        return tuple(getattr(self.module, "OUTPUT_ARGS", ()))

    @property
    def inout_args(self) -> tuple[str, ...]:
        """Arguments that the op reads and updates in place: compared after the call."""
        return tuple(getattr(self.module, "INOUT_ARGS", ()))

    @property
    def written_args(self) -> tuple[str, ...]:
        """Arguments a call may write: the pure outputs, then the ones updated in place."""
        return (*self.output_args, *self.inout_args)

    @property
    def turned_args(self) -> tuple[str, ...]:
        """Arguments whose integer tensors hold plain values (no index, offset, count or
        quantised block: what a kernel addresses by), which the judge may move about for a
        replay's warm-up as it moves floating ones (kgb.evaluate.first_call)."""
        return tuple(getattr(self.module, "TURNED_ARGS", ()))

    @property
    def kernel_required(self) -> bool:
        """False only for views and metadata ops whose spec says so explicitly."""
        return bool(getattr(self.module, "KERNEL_REQUIRED", True))

    @property
    def allowed_torch_ops(self) -> frozenset[str]:
        return frozenset(getattr(self.module, "ALLOWED_TORCH_OPS", ()))

    @property
    def denied_torch_ops(self) -> frozenset[str]:
        return frozenset(getattr(self.module, "DENIED_TORCH_OPS", ()))

    def problem(self, chip_notes: str = "", show_reference: bool = True) -> Problem:
        """What a method may see: never the solution, never the cases."""
        reference = ""
        if show_reference:
            try:
                ref = self.module.reference
                fns = ref.values() if isinstance(ref, Mapping) else [ref]
                reference = "\n\n".join(inspect.getsource(f) for f in fns)
            except (OSError, TypeError):
                reference = ""
        return Problem(
            op=self.id,
            source=self.source,
            name=self.name,
            task=self.task,
            signatures="\n\n".join(s.text for s in self.signatures.values()),
            entry_points=tuple(self.signatures),
            reference=reference,
            chip_notes=chip_notes,
        )


@dataclass(frozen=True)
class Problem:
    """What a method may see of an operator."""

    op: str
    source: str
    name: str
    task: str
    signatures: str
    entry_points: tuple[str, ...]
    reference: str
    chip_notes: str


def _parse_signatures(op_id: str, text: str) -> dict[str, Signature]:
    try:
        tree = syntax.parse(text)
    except SyntaxError as e:
        raise SpecError(f"{op_id}: SIGNATURES is not valid Python: {e}") from e
    signatures = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            raise SpecError(f"{op_id}: SIGNATURES may hold only function stubs")
        a = node.args
        positional = tuple(x.arg for x in [*a.posonlyargs, *a.args])
        keyword_only = tuple(x.arg for x in a.kwonlyargs)
        signatures[node.name] = Signature(
            node.name, ast.get_source_segment(text, node) or "", positional, keyword_only
        )
    if not signatures:
        raise SpecError(f"{op_id}: SIGNATURES defines no entry point")
    return signatures


def _import_file(path: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module_name(path: Path) -> str:
    return f"kgb_spec_{path.parent.parent.name}_{path.parent.name}"


def load_spec(path: Path) -> Spec:
    """Load and validate one spec.py."""
    path = Path(path).resolve()
    return _validated(_import_file(path, _module_name(path)), path)


def spec_from_text(text: str, path: Path, cases: Callable[[], list[Case]] | None = None) -> Spec:
    """The spec that `text`, the contents of `path`, defines, without reading any file: for
    a confined process that may not read the repo (kgb.evaluate.candidate).
    The kgb modules the spec imports must be imported already (`import_spec_libraries`).
    `cases`: where `text` has no CASES (`text_without_cases`), the cases it is to have, made
    once the module exists (their params may hold its classes)."""
    path = Path(path)
    module = ModuleType(_module_name(path))
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # dataclasses defined in a spec look their module up
    exec(compile(text, str(path), "exec"), module.__dict__)  # noqa: S102 - the judge's own spec file
    if cases is not None:
        module.CASES = cases()
    return _validated(module, path)


# The packages of kgb that spec files import: a process that loads a spec from its text, in
# a sandbox that cannot read the repo, needs them imported before the sandbox closes.
SPEC_LIBRARIES = ("kgb.aten_families", "kgb.cublas_families", "kgb.vllm")
# ... but not their modules that no process running candidate code may hold
KEPT_OUT = ("_solutions", "_cases")


def import_spec_libraries() -> None:
    """Import every module that a spec file may import from kgb (0.15 s on the project's
    machine, once per engine: the processes it forks have them). Not the generators, nor the
    modules that hold the known-good solutions' text for them (`*_solutions`), nor those that
    hold the families' cases (`*_cases`, imported when a judge loads a spec): a candidate
    process could read them through `sys.modules` (tests/test_spec_libraries.py,
    tests/test_hidden_cases.py)."""
    import pkgutil

    importlib.import_module("kgb.cublas")
    importlib.import_module("kgb.generated_files")
    for package in SPEC_LIBRARIES:
        for found in pkgutil.iter_modules(importlib.import_module(package).__path__):
            if found.name not in ("generate", "__main__") and not found.name.endswith(KEPT_OUT):
                importlib.import_module(f"{package}.{found.name}")


def _validated(module: ModuleType, path: Path) -> Spec:
    source, name = path.parent.parent.name, path.parent.name
    op_id = f"{source}::{name}"
    for required in ("VERSION", "SIGNATURES", "CASES", "make_inputs", "reference"):
        if not hasattr(module, required):
            raise SpecError(f"{op_id}: spec.py lacks {required}")
    if not (module.__doc__ or "").strip():
        raise SpecError(f"{op_id}: spec.py needs a module docstring (the task text)")
    signatures = _parse_signatures(op_id, module.SIGNATURES)
    cases = tuple(module.CASES)
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise SpecError(f"{op_id}: case names repeat")
    for case in cases:
        if case.entry is not None and case.entry not in signatures:
            raise SpecError(f"{op_id}: case {case.name} names unknown entry {case.entry}")
        if case.entry is None and len(signatures) > 1:
            raise SpecError(f"{op_id}: case {case.name} must name its entry point")
    if not any(c.tag == CaseTag.SMOKE for c in cases):
        raise SpecError(f"{op_id}: needs at least one smoke case")
    return Spec(
        source=source,
        name=name,
        path=path,
        version=int(module.VERSION),
        task=inspect.cleandoc(module.__doc__ or ""),
        signatures=signatures,
        cases=cases,
        module=module,
    )


def discover(root: Path = OPERATORS_DIR) -> dict[str, Path]:
    """Every operator id found under root, mapped to its spec.py, in a stable order."""
    found = {}
    for source in SOURCES:
        for spec_path in sorted((root / source).glob("*/spec.py")):
            found[f"{source}::{spec_path.parent.name}"] = spec_path
    return found


def unknown_operator(op: str) -> str | None:
    """What to tell of an operator id that names no operator, with the nearest ids; None if it names one."""
    known = discover()
    if op in known:
        return None
    near = difflib.get_close_matches(op, known, n=3)
    hint = f"did you mean {', '.join(near)}? " if near else ""
    return f"unknown operator {op!r}; {hint}ids are <source>::<folder> of operators/, e.g. aten::softmax"


def select(source: str, ops: list[str] | None = None, root: Path = OPERATORS_DIR) -> list[str]:
    """The operator ids of a job: a source (or `all`), optionally narrowed to `ops`."""
    if source != "all" and source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; choose one of {', '.join((*SOURCES, 'all'))}")
    available = discover(root)
    in_source = [op for op in available if source == "all" or op.startswith(f"{source}::")]
    if not ops:
        return in_source
    unknown = [op for op in ops if op not in available]
    if unknown:
        raise ValueError(f"unknown operators {unknown}; ids look like aten::softmax")
    return [op for op in in_source if op in set(ops)]


def load(op_id: str, root: Path = OPERATORS_DIR) -> Spec:
    source, _, name = op_id.partition("::")
    return load_spec(root / source / name / "spec.py")
