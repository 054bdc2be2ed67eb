"""ATen operators that are one family written several times (eq/gt/le, div/div_/
floor_divide, index/index_put_/_index_put_impl_, mean/sum, ...): each family module
describes its members once (task text, cases, inputs, references, the Triton solution
assembled from `kernels/`), and `python -m kgb.aten_families` writes their
`operators/aten/<name>/` files. `views`, `layout`, `split_views` and the modules a
family splits out (`copies_text`, `copies_layout`, `view_ops_text`...) are helpers, not
families.

A family module provides `members() -> list[Member]`, `cases(name) -> list[Case]` and
the functions its specs bind (`make_inputs`, and `compare` where the default comparison
is not enough). See docs/adding-an-operator.md, "Generated families".
"""

from kgb.aten_families import (
    comparison,
    copies,
    division,
    extremum,
    filled_like,
    filling,
    indexing,
    lazy_bits,
    loss,
    matmul,
    pointwise,
    reduction,
    rowwise,
    sampling,
    scalar_read,
    strided_empty,
    subtraction,
    trigonometric,
    unary,
    view_ops,
)

# explicit registry: family name -> module
FAMILIES = {
    "comparison": comparison,
    "copies": copies,
    "division": division,
    "extremum": extremum,
    "filled_like": filled_like,
    "filling": filling,
    "indexing": indexing,
    "lazy_bits": lazy_bits,
    "loss": loss,
    "matmul": matmul,
    "pointwise": pointwise,
    "reduction": reduction,
    "rowwise": rowwise,
    "sampling": sampling,
    "scalar_read": scalar_read,
    "strided_empty": strided_empty,
    "subtraction": subtraction,
    "trigonometric": trigonometric,
    "unary": unary,
    "view_ops": view_ops,
}
