"""Row gather for mixture-of-experts: vLLM's `shuffle_rows` custom op (vLLM 0.13). The
CUTLASS MoE path uses it to lay tokens out expert by expert before the grouped GEMM (each
token repeated once per selected expert) and to bring the results back afterwards.

    shuffle_rows(input_tensor, dst2src_map, output_tensor) -> None

For every destination row d in 0..num_dst_rows-1:

    output_tensor[d, :] = input_tensor[dst2src_map[d], :]

- `input_tensor`: shape [num_src_rows, num_cols], contiguous; dtype float32, float16,
  bfloat16, float8_e4m3fn, float8_e5m2 or uint8. num_cols is a multiple of 16.
- `dst2src_map`: int32, shape [num_dst_rows], every value in [0, num_src_rows). Values may
  repeat (a token routed to several experts is copied several times) and some source rows
  may never be read. num_dst_rows may be larger or smaller than num_src_rows.
- `output_tensor`: contiguous, shape [num_dst_rows, num_cols], the dtype of
  `input_tensor`; its previous contents are garbage and every element is written.
  Nothing is returned; `input_tensor` and `dst2src_map` are not modified.

The op copies bits: the result must be bit-exact (float8 outputs are compared exactly).

Speed baseline: the reference below (vllm is not importable on the GPU host).
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def shuffle_rows(input_tensor: torch.Tensor, dst2src_map: torch.Tensor, output_tensor: torch.Tensor) -> None:
    """vllm::shuffle_rows(Tensor input_tensor, Tensor dst2src_map, Tensor! output_tensor) -> ()"""
'''

OUTPUT_ARGS = ("output_tensor",)


def _case(name, tag, src_rows, dst_rows, cols, dtype, seed=0):
    return Case(name, tag, dict(src_rows=src_rows, dst_rows=dst_rows, cols=cols, dtype=dtype), seed=seed)


CASES = [
    _case("smoke-expand-bf16", "smoke", 5, 10, 48, "bfloat16"),
    _case("smoke-gather-f32", "smoke", 9, 4, 32, "float32", seed=1),
    # real MoE shapes: tokens x top-k rows of the model's hidden size
    _case("mixtral-top2-bf16", "check", 37, 74, 4096, "bfloat16"),
    _case("deepseek-top8-fp8", "check", 19, 152, 7168, "float8_e4m3fn"),
    _case("qwen3-top8-f16", "check", 33, 264, 2048, "float16"),
    _case("unpermute-f32", "check", 120, 40, 1536, "float32"),
    _case("e5m2-bf16-width", "check", 7, 21, 5120, "float8_e5m2"),
    _case("bytes", "check", 64, 200, 112, "uint8"),
    _case("mixtral-prefill-bf16", "bench", 8192, 16384, 4096, "bfloat16"),
    _case("deepseek-prefill-fp8", "bench", 4096, 32768, 7168, "float8_e4m3fn"),
    _case("decode-top8-f16", "bench", 64, 512, 4096, "float16"),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = (p["src_rows"], p["cols"])
    if dtype == torch.uint8:
        x = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    else:
        x = (torch.randn(shape, generator=gen) * 4).to(dtype)
    dst2src = torch.randint(0, p["src_rows"], (p["dst_rows"],), generator=gen, dtype=torch.int32)
    out = torch.empty((p["dst_rows"], p["cols"]), dtype=dtype)
    return dict(input_tensor=x.to(device), dst2src_map=dst2src.to(device), output_tensor=out.to(device))


def reference(input_tensor, dst2src_map, output_tensor):
    rows = input_tensor.view(torch.uint8).index_select(0, dst2src_map.long())  # bit copy, any dtype
    output_tensor.view(torch.uint8).copy_(rows)
