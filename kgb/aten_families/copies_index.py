"""Cases and inputs of the copies family's index copies: cat, stack, scatter, gather,
index_select, rot90 and select_backward. Their data tensors come from `values` (floats
from randn, integers in [-1000, 1000), bool), plain or transposed; the default comparison
applies to all of them."""

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

# Each part: (shape, dtype) or (shape, dtype, "t") for a transposed view of that shape.


def _cat_case(name, tag, parts, dim, seed=0):
    return Case(name, tag, dict(parts=parts, dim=dim), seed=seed)


CAT_CASES = [
    _cat_case("smoke-f32", "smoke", [((3, 5), "float32"), ((2, 5), "float32")], 0),
    _cat_case("smoke-mixed", "smoke", [((4, 3), "float16"), ((4, 6), "float32"), ((0,), "float32")], 1, seed=1),
    _cat_case("kv-append-bf16", "check", [((2, 8, 100, 64), "bfloat16"), ((2, 8, 1, 64), "bfloat16")], 2),
    _cat_case("channels-f16", "check", [((2, 64, 13, 13), "float16"), ((2, 32, 13, 13), "float16"), ((2, 3, 13, 13), "float16")], 1),
    _cat_case("last-dim-f32", "check", [((5, 7, 33), "float32"), ((5, 7, 1), "float32"), ((5, 7, 100), "float32")], -1),
    _cat_case("many-parts", "check", [((3, 17), "float32")] * 12, 0),
    _cat_case("transposed", "check", [((40, 30), "float32", "t"), ((40, 50), "float32"), ((40, 7), "float32", "t")], 1),
    _cat_case("empty-part", "check", [((4, 0, 6), "float32"), ((4, 3, 6), "float32")], 1),
    _cat_case("all-empty", "check", [((0, 5), "float16"), ((0, 5), "float16")], 0),
    _cat_case("int-float", "check", [((10, 4), "int64"), ((10, 4), "bfloat16")], 0),
    _cat_case("int-bool", "check", [((9,), "bool"), ((7,), "int32")], 0),
    _cat_case("int64-only", "check", [((300,), "int64"), ((1025,), "int64")], 0),
    _cat_case("bench-kv-bf16", "bench", [((16, 32, 2000, 128), "bfloat16"), ((16, 32, 48, 128), "bfloat16")], 2),
    _cat_case("bench-channels-f16", "bench", [((32, 256, 56, 56), "float16"), ((32, 256, 56, 56), "float16")], 1),
    _cat_case("bench-rows-f32", "bench", [((8192, 4096), "float32")] * 4, 0),
]


def cat_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    tensors = [data(part[0], part[1], len(part) > 2, gen, device) for part in case.params["parts"]]
    return dict(tensors=tensors, dim=case.params["dim"])


def _stack_case(name, tag, shape, count, dim, dtypes=("float32",), transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, count=count, dim=dim, dtypes=dtypes, transpose=transpose), seed=seed)


STACK_CASES = [
    _stack_case("smoke-f32", "smoke", (3, 5), 2, 0),
    _stack_case("smoke-last-mixed", "smoke", (4, 3), 3, -1, ("float16", "float32"), seed=1),
    _stack_case("heads-bf16", "check", (2, 77, 64), 12, 1, ("bfloat16",)),
    _stack_case("last-dim-f32", "check", (33, 65), 4, 2),
    _stack_case("middle-f16", "check", (5, 7, 9), 3, -2, ("float16",)),
    _stack_case("scalars", "check", (), 7, 0),
    _stack_case("empty", "check", (0, 4), 3, 1),
    _stack_case("transposed", "check", (40, 30), 3, 0, transpose=True),
    _stack_case("int-float", "check", (10, 4), 2, 0, ("int64", "float16")),
    _stack_case("bool", "check", (100,), 5, 1, ("bool",)),
    _stack_case("bench-heads-bf16", "bench", (8, 4096, 128), 32, 1, ("bfloat16",)),
    _stack_case("bench-pair-f32", "bench", (4096, 4096), 2, -1),
]


def stack_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtypes = p["dtypes"]
    tensors = [data(p["shape"], dtypes[k % len(dtypes)], p["transpose"] and k % 2 == 0, gen, device)
               for k in range(p["count"])]
    return dict(tensors=tensors, dim=p["dim"])


# ---- scatter and gather: an index tensor picks positions along one dim ---------------------


def _scatter_case(name, tag, entry, shape, dim, ishape, dtype="float32", sshape=None, layout="plain", value=None,
                  seed=0):
    params = dict(shape=shape, dim=dim, ishape=ishape, sshape=sshape or ishape, dtype=dtype, layout=layout, value=value)
    return Case(name, tag, params, seed=seed, entry=entry)


SCATTER_CASES = [
    _scatter_case("smoke-src-f32", "smoke", "scatter_src", (6, 9), 1, (6, 4)),
    _scatter_case("smoke-value-f16", "smoke", "scatter_value", (7, 5), 0, (3, 5), "float16", value=-1.5, seed=1),
    _scatter_case("onehot-f32", "check", "scatter_value", (64, 1000), 1, (64, 1), value=1.0),
    _scatter_case("labels-bf16", "check", "scatter_src", (33, 500), 1, (33, 50), "bfloat16"),
    _scatter_case("dim0-larger-src", "check", "scatter_src", (100, 20), 0, (70, 13), sshape=(80, 19)),
    _scatter_case("3d-middle-f16", "check", "scatter_src", (4, 129, 17), 1, (4, 100, 17), "float16"),
    _scatter_case("4d-last", "check", "scatter_src", (2, 3, 5, 40), -1, (2, 3, 5, 7)),
    _scatter_case("transposed", "check", "scatter_src", (50, 60), 1, (50, 9), layout="transposed"),
    _scatter_case("zero-dim", "check", "scatter_src", (), 0, ()),
    _scatter_case("empty-index", "check", "scatter_src", (10, 4), 1, (10, 0)),
    _scatter_case("int64-value", "check", "scatter_value", (30, 40), 1, (30, 11), "int64", value=-7),
    _scatter_case("int32-src", "check", "scatter_src", (30, 40), 0, (20, 40), "int32"),
    _scatter_case("bool-value", "check", "scatter_value", (30, 40), 1, (30, 5), "bool", value=True),
    _scatter_case("bench-onehot-f32", "bench", "scatter_value", (8192, 32000), 1, (8192, 1), value=1.0),
    _scatter_case("bench-src-bf16", "bench", "scatter_src", (4096, 8192), 1, (4096, 4096), "bfloat16"),
]


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


def _gather_case(name, tag, shape, dim, ishape, dtype="float32", layout="plain", seed=0):
    return Case(name, tag, dict(shape=shape, dim=dim, ishape=ishape, dtype=dtype, layout=layout), seed=seed)


GATHER_CASES = [
    _gather_case("smoke-f32", "smoke", (6, 9), 1, (6, 4)),
    _gather_case("smoke-dim0-f16", "smoke", (7, 5), 0, (3, 5), "float16", seed=1),
    _gather_case("logprobs-f32", "check", (64, 32000), -1, (64, 1)),
    _gather_case("topk-bf16", "check", (33, 1000), 1, (33, 50), "bfloat16"),
    _gather_case("dim0-partial", "check", (100, 20), 0, (70, 13)),
    _gather_case("3d-middle-f16", "check", (4, 129, 17), 1, (4, 300, 17), "float16"),
    _gather_case("4d-last", "check", (2, 3, 5, 40), 3, (2, 3, 5, 7)),
    _gather_case("transposed-self", "check", (50, 60), 1, (50, 9), layout="tself"),
    _gather_case("expanded-index", "check", (8, 16, 32), 1, (8, 5, 32), layout="expand"),
    _gather_case("transposed-index", "check", (40, 30), 0, (25, 30), layout="tindex"),
    _gather_case("zero-dim", "check", (), 0, ()),
    _gather_case("empty-index", "check", (10, 4), 1, (10, 0)),
    _gather_case("int64-data", "check", (30, 40), 1, (30, 40), "int64"),
    _gather_case("bool-data", "check", (30, 40), 0, (20, 40), "bool"),
    _gather_case("bench-logprobs-f32", "bench", (4096, 32000), 1, (4096, 64)),
    _gather_case("bench-dense-bf16", "bench", (2048, 8192), 1, (2048, 8192), "bfloat16"),
]


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


def _index_select_case(name, tag, shape, dim, count, dtype="float32", idx="int64", transpose=False, seed=0):
    params = dict(shape=shape, dim=dim, count=count, dtype=dtype, idx=idx, transpose=transpose)
    return Case(name, tag, params, seed=seed)


INDEX_SELECT_CASES = [
    _index_select_case("smoke-rows-f32", "smoke", (11, 7), 0, 5),
    _index_select_case("smoke-cols-f16", "smoke", (6, 9), -1, 4, "float16", seed=1),
    _index_select_case("embedding-rows-bf16", "check", (1000, 768), 0, 300, "bfloat16"),
    _index_select_case("middle-dim-f32", "check", (4, 77, 33), 1, 50),
    _index_select_case("last-dim-f16", "check", (3, 5, 129), 2, 200, "float16"),
    _index_select_case("int32-index", "check", (257, 31), 0, 100, idx="int32"),
    _index_select_case("strided-index", "check", (50, 13), 0, 20, idx="strided"),
    _index_select_case("scalar-index", "check", (20, 6), 1, None),
    _index_select_case("zero-dim-self", "check", (), 0, 1),
    _index_select_case("empty-index", "check", (8, 5), 0, 0),
    _index_select_case("transposed", "check", (64, 40), 0, 33, transpose=True),
    _index_select_case("int64-data", "check", (100, 3), 0, 64, "int64"),
    _index_select_case("bool-data", "check", (7, 100), 1, 20, "bool"),
    _index_select_case("bench-vocab-f16", "bench", (50257, 1024), 0, 16384, "float16"),
    _index_select_case("bench-cols-f32", "bench", (4096, 8192), 1, 2048),
]


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


def _rot90_case(name, tag, shape, k, dims, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(shape=shape, k=k, dims=dims, dtype=dtype, transpose=transpose), seed=seed)


ROT90_CASES = [
    _rot90_case("smoke-k1", "smoke", (5, 7), 1, [0, 1]),
    _rot90_case("smoke-k2-f16", "smoke", (2, 3, 4), 2, [1, 2], "float16", seed=1),
    _rot90_case("k3-f32", "check", (33, 65), 3, [0, 1]),
    _rot90_case("k0-copy", "check", (17, 9), 0, [0, 1]),
    _rot90_case("negative-k", "check", (6, 10, 12), -1, [1, 2]),
    _rot90_case("large-k", "check", (6, 10, 12), 7, [2, 0]),
    _rot90_case("images-bf16", "check", (4, 3, 32, 48), 1, [-2, -1], "bfloat16"),
    _rot90_case("batch-last", "check", (7, 8, 9, 3), 2, [0, 2]),
    _rot90_case("transposed", "check", (40, 30), 1, [0, 1], transpose=True),
    _rot90_case("int64", "check", (11, 13), 3, [1, 0], "int64"),
    _rot90_case("bool", "check", (11, 13), 1, [0, 1], "bool"),
    _rot90_case("empty", "check", (0, 5), 1, [0, 1]),
    _rot90_case("bench-images-f16", "bench", (64, 3, 512, 512), 1, [2, 3], "float16"),
    _rot90_case("bench-matrix-f32", "bench", (8192, 8192), 2, [0, 1]),
]


def rot90_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    return dict(self=data(p["shape"], p["dtype"], p["transpose"], gen, device), k=p["k"], dims=list(p["dims"]))


def _select_backward_case(name, tag, sizes, dim, index, dtype="float32", transpose=False, seed=0):
    return Case(name, tag, dict(sizes=sizes, dim=dim, index=index, dtype=dtype, transpose=transpose), seed=seed)


SELECT_BACKWARD_CASES = [
    _select_backward_case("smoke-f32", "smoke", (4, 5, 6), 1, 2),
    _select_backward_case("smoke-last-f16", "smoke", (3, 7), -1, -1, "float16", seed=1),
    _select_backward_case("cls-token-bf16", "check", (8, 197, 768), 1, 0, "bfloat16"),
    _select_backward_case("last-token-f32", "check", (4, 77, 512), 1, -1),
    _select_backward_case("first-dim", "check", (5, 33, 17), 0, 3, "float16"),
    _select_backward_case("inner-dim", "check", (2, 3, 4, 129), 3, 100),
    _select_backward_case("vector", "check", (1000,), 0, 999),
    _select_backward_case("transposed-grad", "check", (6, 40, 30), 0, 5, transpose=True),
    _select_backward_case("int64", "check", (10, 11), 1, 4, "int64"),
    _select_backward_case("bool", "check", (10, 11), 0, 9, "bool"),
    _select_backward_case("empty", "check", (0, 4, 3), 2, 1),
    _select_backward_case("bench-cls-f16", "bench", (256, 197, 1024), 1, 0, "float16"),
    _select_backward_case("bench-last-f32", "bench", (64, 2048, 1024), 1, -1),
]


def select_backward_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    sizes = list(p["sizes"])
    gshape = sizes[: p["dim"] % len(sizes)] + sizes[p["dim"] % len(sizes) + 1:]
    g = values(gshape[::-1] if p["transpose"] else gshape, p["dtype"], gen).to(device)
    if p["transpose"]:
        g = g.permute(*reversed(range(g.ndim)))
    return dict(grad_output=g, input_sizes=sizes, dim=p["dim"], index=p["index"])
