"""Embedding lookup (forward): `aten::embedding`.

out[..., :] = weight[indices[...], :]: every entry of `indices` selects one row of the 2-D
table `weight` (num_embeddings x embedding_dim). The result has shape
indices.shape + (embedding_dim,) and weight's dtype.
- `indices` is an int64 or int32 tensor of any shape (0-d gives a 1-D result, an empty
  tensor an empty result), possibly non-contiguous; values are in [0, num_embeddings) and
  may repeat.
- `weight` may be a non-contiguous view (e.g. a transposed matrix), in float32, float16
  or bfloat16.
- `padding_idx`, `scale_grad_by_freq` and `sparse` only affect the backward pass: the
  forward result ignores them (rows at padding_idx are returned as stored).
- The result is a new tensor; `weight` and `indices` must not be modified.

Required overload: `embedding` (default). Left out: `embedding.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def embedding(weight: torch.Tensor, indices: torch.Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False, sparse: bool = False) -> torch.Tensor:
    """aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor"""
'''


def _case(name, tag, table, ishape, dtype="float32", idx="int64", layout="plain", padding_idx=-1, seed=0):
    params = dict(table=table, ishape=ishape, dtype=dtype, idx=idx, layout=layout, padding_idx=padding_idx)
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-f32", "smoke", (20, 7), (3, 5)),
    _case("smoke-f16-pad", "smoke", (11, 16), (9,), "float16", padding_idx=0, seed=1),
    _case("bert-tokens-bf16", "check", (30522, 768), (4, 128), "bfloat16"),
    _case("gpt2-f32", "check", (5000, 1600), (2, 37)),
    _case("odd-dim-f16", "check", (1000, 100), (3, 7, 11), "float16"),
    _case("int32-indices", "check", (300, 64), (257,), idx="int32"),
    _case("scalar-index", "check", (50, 33), ()),
    _case("empty-indices", "check", (50, 33), (0, 4)),
    _case("transposed-weight", "check", (64, 200), (30,), layout="tweight"),
    _case("transposed-indices", "check", (64, 48), (16, 24), layout="tindices"),
    _case("bench-llama-f16", "bench", (32000, 4096), (8, 2048), "float16"),
    _case("bench-gpt2-bf16", "bench", (50257, 768), (32, 1024), "bfloat16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    num, dim = p["table"]
    dtype = getattr(torch, p["dtype"])
    if p["layout"] == "tweight":
        weight = torch.randn((dim, num), generator=gen).to(dtype).to(device).t()
    else:
        weight = torch.randn((num, dim), generator=gen).to(dtype).to(device)
    ishape = tuple(p["ishape"])
    if p["layout"] == "tindices":
        indices = torch.randint(0, num, ishape[::-1], generator=gen).to(device).t()
    else:
        indices = torch.randint(0, num, ishape, generator=gen).to(device)
    if p["idx"] == "int32":
        indices = indices.to(torch.int32)
    return dict(weight=weight, indices=indices, padding_idx=p["padding_idx"], scale_grad_by_freq=False, sparse=False)


def reference(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return torch.ops.aten.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
