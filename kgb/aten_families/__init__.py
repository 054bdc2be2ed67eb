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

from functools import cache

from kgb.generated_files import family_modules


@cache
def _families() -> dict:
    return family_modules(__name__, __path__, "members")


def __getattr__(name: str):
    # FAMILIES (family name -> module: every module here with a `members()`) is found on first
    # use, not when the package is imported: a spec imports only its own family, and a
    # judge that loads it should not import all of them.
    if name == "FAMILIES":
        return _families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
