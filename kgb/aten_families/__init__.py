"""ATen operators that are one family written several times (eq/gt/le, div/div_/
floor_divide, index/index_put_/_index_put_impl_, mean/sum, ...): each family module
describes its members once (task text, cases, inputs, references, the Triton solution
assembled from `kernels/`), and `python -m kgb.aten_families` writes their
`operators/aten/<name>/` files. `views` and `layout` are helpers, not families.

A family module provides `members() -> list[Member]`, `cases(name) -> list[Case]` and
the functions its specs bind (`make_inputs`, and `compare` where the default comparison
is not enough). See docs/adding-an-operator.md, "Generated families".
"""

from kgb.aten_families import (
    comparison,
    division,
    filled_like,
    indexing,
    pointwise,
    reduction,
    scalar_read,
    subtraction,
    trigonometric,
)

# explicit registry: family name -> module
FAMILIES = {
    "comparison": comparison,
    "division": division,
    "filled_like": filled_like,
    "indexing": indexing,
    "pointwise": pointwise,
    "reduction": reduction,
    "scalar_read": scalar_read,
    "subtraction": subtraction,
    "trigonometric": trigonometric,
}
