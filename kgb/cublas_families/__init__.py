"""cuBLAS routines as families: each family module describes several routines once
(data, task text, inputs, references, a Triton solution template; their cases in
`<family>_cases.py`), and `python -m kgb.cublas_families` writes their
`operators/cublas/<name>/` files.

A family module provides `routines() -> list[Routine]` and
`make_inputs(name, case, gen, device)`, plus the reference (and compare) functions its
routines name. Only `routines()` imports the family's `_cases` module, inside the
function: engines import the family modules for their specs, and a process that runs
candidate code must not hold the hidden cases (kgb.operators.import_spec_libraries). See
docs/adding-an-operator.md, "Generated families".
"""

from functools import cache

from kgb.generated_files import family_modules


@cache
def _families() -> dict:
    return family_modules(__name__, __path__, "routines")


def __getattr__(name: str):
    # FAMILIES (family name -> module: every module here with a `routines()`) is found on first
    # use, not when the package is imported: a spec imports only its own family, and a
    # judge that loads it should not import all of them.
    if name == "FAMILIES":
        return _families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
