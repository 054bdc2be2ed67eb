"""cuBLAS routines as families: each family module describes several routines once
(data, task text, cases, inputs, references, a Triton solution template), and
`python -m kgb.cublas_families` writes their `operators/cublas/<name>/` files.

A family module provides `routines() -> list[Routine]` and
`make_inputs(name, case, gen, device)`, plus the reference (and compare) functions its
routines name. See docs/adding-an-operator.md, "Generated families".
"""

from kgb.generated_files import family_modules

# family name -> module: every module here with a `routines()`
FAMILIES = family_modules(__name__, __path__, "routines")
