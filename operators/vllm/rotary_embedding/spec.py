"""Rotary position embedding applied in place to queries and keys: vLLM's
`rotary_embedding` custom op (vLLM 0.13).

    rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox) -> None

Each token t has a position p = positions[t]. Its query (and key) holds several heads of
`head_size` elements; in every head, the first rot_dim = cos_sin_cache.shape[1] elements
are rotated and the remaining head_size - rot_dim elements ("partial rotary") are left as
they are. With half = rot_dim // 2, cos = cos_sin_cache[p, :half] and
sin = cos_sin_cache[p, half:], the rot_dim elements are split into `half` pairs (x_i, y_i):

- is_neox=True (GPT-NeoX style): x_i = head[i], y_i = head[half + i];
- is_neox=False (GPT-J style): x_i = head[2i], y_i = head[2i + 1];

and each pair is replaced by

    x_i <- x_i * cos[i] - y_i * sin[i]
    y_i <- y_i * cos[i] + x_i * sin[i]        (both using the values from before)

computed in float32 from the float32 conversions of x, y, cos and sin, then rounded to
the tensor's dtype.

Arguments:
- `positions`: int64, shape [num_tokens], values in [0, cos_sin_cache.shape[0]).
- `query`: float16, bfloat16 or float32, shape [num_tokens, num_heads * head_size] or
  [num_tokens, num_heads, head_size]. The elements of one head are contiguous; heads are
  head_size elements apart in the 2-D form and query.stride(1) apart in the 3-D form;
  tokens are query.stride(0) apart. query is often a column slice of a fused qkv
  projection, so its token stride can exceed num_heads * head_size.
- `key`: the same for num_kv_heads heads (num_heads is a multiple of num_kv_heads), with
  its own strides; or None, in which case only the query is rotated.
- `head_size`: a Python int; rot_dim <= head_size and rot_dim is even.
- `cos_sin_cache`: [max_position, rot_dim], same dtype as query: each row holds the
  cosines, then the sines.
- `is_neox`: a Python bool.

query and key are updated in place; nothing is returned. Only the rotated elements may
change; `positions` and `cos_sin_cache` must not be modified. Every call has at least one
token. The batched form (positions of shape [batch, seq_len]) is not part of the task.
"""

import torch

from kgb.operators import Case
from kgb.vllm.attention import rope_cos_sin_cache

VERSION = 1

SIGNATURES = '''
def rotary_embedding(
    positions: torch.Tensor,
    query: torch.Tensor,
    key: torch.Tensor | None,
    head_size: int,
    cos_sin_cache: torch.Tensor,
    is_neox: bool,
) -> None:
    """vllm::rotary_embedding(Tensor positions, Tensor! query, Tensor!? key, int head_size,
    Tensor cos_sin_cache, bool is_neox) -> ()"""
'''

INOUT_ARGS = ("query", "key")


def _case(
    name,
    tag,
    tokens,
    heads,
    kv_heads,
    head_size,
    rot_dim,
    neox,
    dtype,
    layout="flat",
    max_pos=4096,
    seed=0,
):
    """layout: "flat" [T, H*D] contiguous; "qkv" q and k are column slices of a fused
    [T, (H + 2*KV)*D] tensor; "heads" [T, H, D] views of a fused [T, H + 2*KV, D] tensor;
    kv_heads=0 passes key=None."""
    params = dict(
        tokens=tokens,
        heads=heads,
        kv_heads=kv_heads,
        head_size=head_size,
        rot_dim=rot_dim,
        neox=neox,
        dtype=dtype,
        layout=layout,
        max_pos=max_pos,
    )
    return Case(name, tag, params, seed=seed)


CASES = [
    _case("smoke-neox-f32", "smoke", 5, 2, 1, 16, 16, True, "float32"),
    _case(
        "smoke-gptj-partial-bf16", "smoke", 3, 2, 2, 24, 8, False, "bfloat16", layout="qkv", seed=1
    ),
    # real models
    _case("llama3-8b-bf16", "check", 77, 32, 8, 128, 128, True, "bfloat16", layout="qkv"),
    _case("llama2-7b-f16", "check", 33, 32, 32, 128, 128, True, "float16"),
    _case("gptj-6b-f16", "check", 19, 16, 16, 256, 64, False, "float16", layout="qkv"),
    _case("neox-20b-partial-f16", "check", 21, 64, 64, 96, 24, True, "float16", layout="qkv"),
    _case("phi2-partial-bf16", "check", 45, 32, 32, 80, 32, True, "bfloat16"),
    _case("chatglm-gptj-bf16", "check", 50, 32, 2, 128, 64, False, "bfloat16", layout="heads"),
    _case(
        "qwen2-heads-f32",
        "check",
        129,
        28,
        4,
        128,
        128,
        True,
        "float32",
        layout="heads",
        max_pos=32768,
    ),
    _case("gemma-hd256-f32", "check", 7, 8, 1, 256, 256, True, "float32"),
    _case("query-only-bf16", "check", 31, 16, 0, 64, 64, True, "bfloat16", layout="qkv"),
    _case("one-token-gptj-f32", "check", 1, 12, 12, 64, 64, False, "float32"),
    _case("long-position-f16", "check", 40, 8, 8, 64, 64, True, "float16", max_pos=131072),
    # bench: prefill batches
    _case(
        "llama3-8b-prefill-bf16", "bench", 16384, 32, 8, 128, 128, True, "bfloat16", layout="qkv"
    ),
    _case("llama3-70b-prefill-f16", "bench", 8192, 64, 8, 128, 128, True, "float16", layout="qkv"),
    _case("gptj-prefill-f16", "bench", 8192, 16, 16, 256, 64, False, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    t, h, kv, d = p["tokens"], p["heads"], p["kv_heads"], p["head_size"]
    positions = torch.randint(0, p["max_pos"], (t,), generator=gen, dtype=torch.int64).to(device)
    cache = rope_cos_sin_cache(p["max_pos"], p["rot_dim"], dtype, base=10000).to(device)
    if p["layout"] == "flat":
        query = torch.randn(t, h * d, generator=gen).to(dtype).to(device)
        key = torch.randn(t, kv * d, generator=gen).to(dtype).to(device) if kv else None
    else:
        qkv = torch.randn(t, h + 2 * kv, d, generator=gen).to(dtype).to(device)
        if p["layout"] == "qkv":
            qkv = qkv.view(t, -1)
            query, key = qkv[:, : h * d], qkv[:, h * d : (h + kv) * d]
        else:
            query, key = qkv[:, :h], qkv[:, h : h + kv]
        key = key if kv else None
    return dict(
        positions=positions,
        query=query,
        key=key,
        head_size=d,
        cos_sin_cache=cache,
        is_neox=p["neox"],
    )


def reference(positions, query, key, head_size, cos_sin_cache, is_neox):
    half = cos_sin_cache.shape[1] // 2
    cos_sin = cos_sin_cache[positions].float()
    cos, sin = cos_sin[:, None, :half], cos_sin[:, None, half:]
    for t in (query, key):
        if t is None:
            continue
        heads = t.view(t.shape[0], -1, head_size)  # [tokens, heads, head_size], a view of t
        if is_neox:
            x, y = heads[..., :half], heads[..., half : 2 * half]
        else:
            x, y = heads[..., 0 : 2 * half : 2], heads[..., 1 : 2 * half : 2]
        xf, yf = x.float(), y.float()  # for float32 these alias x and y: compute both first
        new_x, new_y = xf * cos - yf * sin, yf * cos + xf * sin
        x.copy_(new_x)
        y.copy_(new_y)
