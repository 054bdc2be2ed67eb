"""Inputs of the copies family's index copies: cat, stack, scatter, gather, index_select,
rot90 and select_backward (their cases are in copies_cases.py). Their data tensors come
from `values` (floats from randn, integers in [-1000, 1000), bool), plain or transposed;
the default comparison applies to all of them."""

from __future__ import annotations

import torch

from kgb.operators import Case


def values(shape, dtype, gen):
    if dtype == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in ("int64", "int32"):
        return torch.randint(-1000, 1000, shape, generator=gen, dtype=getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def data(shape, dtype, transposed, gen, device):
    """A tensor of `shape`: contiguous, or the transpose of a contiguous one (2-D); the view
    is taken after the move to `device`, which would make it contiguous."""
    shape = tuple(shape)
    if transposed:
        return values(shape[::-1], dtype, gen).to(device).t()
    return values(shape, dtype, gen).to(device)


# ---- cat and stack: several tensors joined, their dtypes promoted ---------------------------


def cat_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    """Each part: (shape, dtype), or (shape, dtype, "t") for a transposed view of that shape."""
    tensors = [data(part[0], part[1], len(part) > 2, gen, device) for part in case.params["parts"]]
    return dict(tensors=tensors, dim=case.params["dim"])


def stack_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtypes = p["dtypes"]
    tensors = [data(p["shape"], dtypes[k % len(dtypes)], p["transpose"] and k % 2 == 0, gen, device)
               for k in range(p["count"])]
    return dict(tensors=tensors, dim=p["dim"])


# ---- scatter and gather: an index tensor picks positions along one dim ---------------------


def _unique_index(shape, ishape, dim, gen):
    """index of shape ishape whose values never repeat along dim (a permutation prefix)."""
    if not shape:
        return torch.zeros((), dtype=torch.int64)
    dim = dim % len(shape)
    rows = 1
    for k, s in enumerate(ishape):
        rows *= s if k != dim else 1
    keys = torch.rand((rows, shape[dim]), generator=gen)
    perm = keys.argsort(dim=1)[:, : ishape[dim]]
    moved = [s for k, s in enumerate(ishape) if k != dim] + [ishape[dim]]
    return perm.reshape(moved).movedim(-1, dim).contiguous()


def scatter_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, dtype = tuple(p["shape"]), p["dtype"]
    x = data(shape, dtype, p["layout"] == "transposed", gen, device)
    index = _unique_index(shape, tuple(p["ishape"]), p["dim"], gen).to(device)
    if p["layout"] == "transposed":
        index = index.t().contiguous().t()
    args = dict(self=x, dim=p["dim"], index=index)
    if case.entry == "scatter_src":
        args["src"] = values(tuple(p["sshape"]), dtype, gen).to(device)
    else:
        args["value"] = p["value"]
    return args


def gather_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape, ishape, layout = tuple(p["shape"]), tuple(p["ishape"]), p["layout"]
    size = shape[p["dim"]] if shape else 1
    x = data(shape, p["dtype"], layout == "tself", gen, device)
    if layout == "expand":  # one index row shared by all leading positions (stride 0)
        index = torch.randint(0, size, (1, *ishape[1:]), generator=gen).to(device).expand(ishape)
    elif layout == "tindex":
        index = torch.randint(0, size, ishape[::-1], generator=gen).to(device).t()
    else:
        index = torch.randint(0, size, ishape, generator=gen).to(device)
    return dict(self=x, dim=p["dim"], index=index, sparse_grad=False)


# ---- index_select, rot90, select_backward ----------------------------------------------------


def index_select_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    shape = tuple(p["shape"])
    # transposed on the CPU, then moved: the move keeps the (dense) strides
    x = values(shape[::-1], p["dtype"], gen).t() if p["transpose"] else values(shape, p["dtype"], gen)
    size = shape[p["dim"]] if shape else 1
    if p["count"] is None:
        index = torch.randint(0, size, (), generator=gen)
    elif p["idx"] == "strided":
        index = torch.randint(0, size, (2 * p["count"],), generator=gen).to(device)[::2]
    else:
        index = torch.randint(0, size, (p["count"],), generator=gen)
        index = index.to(torch.int32) if p["idx"] == "int32" else index
    return dict(self=x.to(device), dim=p["dim"], index=index.to(device))


def rot90_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    return dict(self=data(p["shape"], p["dtype"], p["transpose"], gen, device), k=p["k"], dims=list(p["dims"]))


def select_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    sizes = list(p["sizes"])
    gshape = sizes[: p["dim"] % len(sizes)] + sizes[p["dim"] % len(sizes) + 1:]
    g = values(gshape[::-1] if p["transpose"] else gshape, p["dtype"], gen).to(device)
    if p["transpose"]:
        g = g.permute(*reversed(range(g.ndim)))
    return dict(grad_output=g, input_sizes=sizes, dim=p["dim"], index=p["index"])
