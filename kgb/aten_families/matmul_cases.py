"""The matmul family's cases (matmul.py reads them through `cases(name)`), kept out of
the processes that run candidate code: see kgb.operators.import_spec_libraries."""

from __future__ import annotations

from kgb.operators import Case


def _bmm(name, tag, b, m, k, n, dtype, layout="nn", seed=0):
    # layout: one letter per input, n = row-major, t = transposed view, e = expanded batch
    params = dict(b=b, m=m, k=k, n=n, dtype=dtype, layout=layout)
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


def _linear(name, tag, x, out_features, dtype, bias=True, tx=False, tw=False, seed=0):
    # tx: input stored with its last two dims swapped; tw: weight stored as (in, out)
    params = dict(x=x, out_features=out_features, dtype=dtype, bias=bias, tx=tx, tw=tw)
    return Case(name, tag, params, seed=seed, reduction=max(x[-1], 1))


def _matmul(name, tag, a, b, dtype, ta=False, tb=False, seed=0):
    # ta / tb: store that operand's last two dims transposed (a column-major view)
    params = dict(a=a, b=b, dtype=dtype, ta=ta, tb=tb)
    k = a[-1] if a else 1
    return Case(name, tag, params, seed=seed, reduction=max(k, 1))


CASES = {
    "bmm": [
        _bmm("smoke-f32", "smoke", 2, 5, 7, 3, "float32"),
        _bmm("smoke-f16-nt", "smoke", 3, 17, 33, 9, "float16", layout="nt", seed=1),
        _bmm("attn-scores-f32", "check", 24, 77, 64, 77, "float32", layout="nt"),
        _bmm("attn-values-f16", "check", 24, 77, 77, 64, "float16"),
        _bmm("vit-bf16", "check", 12, 197, 64, 197, "bfloat16", layout="nt"),
        _bmm("a-transposed-f32", "check", 4, 100, 300, 50, "float32", layout="tn"),
        _bmm("both-transposed-f16", "check", 4, 65, 129, 33, "float16", layout="tt"),
        _bmm("expanded-bf16", "check", 6, 40, 256, 96, "bfloat16", layout="ne"),
        _bmm("long-k-f32", "check", 2, 64, 2000, 48, "float32"),
        _bmm("vector-like", "check", 5, 1, 300, 1, "float32"),
        _bmm("odd-f16", "check", 3, 31, 17, 129, "float16"),
        _bmm("k-zero", "check", 3, 4, 0, 5, "float32"),
        _bmm("m-zero", "check", 3, 0, 8, 5, "float32"),
        _bmm("batch-zero", "check", 0, 4, 8, 5, "float16"),
        _bmm("bench-attn-f16", "bench", 512, 1024, 128, 1024, "float16", layout="nt"),
        _bmm("bench-square-bf16", "bench", 64, 512, 512, 512, "bfloat16"),
        _bmm("bench-f32", "bench", 16, 1024, 1024, 1024, "float32"),
    ],
    "linear": [
        _linear("smoke-f32", "smoke", (5, 7), 3, "float32"),
        _linear("smoke-f16-nobias", "smoke", (2, 3, 16), 9, "float16", bias=False, seed=1),
        _linear("bert-ffn-f32", "check", (2, 77, 768), 3072, "float32"),
        _linear("bert-ffn-f16", "check", (2, 77, 3072), 768, "float16"),
        _linear("classifier-bf16", "check", (64, 1024), 1000, "bfloat16"),
        _linear("vector-f32", "check", (768,), 100, "float32"),
        _linear("transposed-input", "check", (300, 129), 65, "float32", tx=True),
        _linear("transposed-weight-bf16", "check", (4, 33, 256), 96, "bfloat16", tw=True, bias=False),
        _linear("odd-f16", "check", (3, 5, 17), 31, "float16"),
        _linear("rows-zero", "check", (0, 16), 8, "float32"),
        _linear("in-zero", "check", (4, 0), 8, "float32"),
        _linear("out-zero", "check", (4, 16), 0, "float16"),
        _linear("bench-proj-bf16", "bench", (8192, 4096), 4096, "bfloat16"),
        _linear("bench-ffn-f16", "bench", (8, 2048, 1024), 4096, "float16"),
        _linear("bench-f32", "bench", (4096, 4096), 4096, "float32"),
    ],
    "matmul": [
        _matmul("smoke-mm-f32", "smoke", (5, 7), (7, 3), "float32"),
        _matmul("smoke-batched-f16", "smoke", (2, 1, 9, 17), (3, 17, 6), "float16", tb=True, seed=1),
        _matmul("smoke-dot-f32", "smoke", (33,), (33,), "float32", seed=2),
        _matmul("mm-f32", "check", (300, 768), (768, 100), "float32"),
        _matmul("mm-transposed-bf16", "check", (130, 257), (257, 65), "bfloat16", ta=True, tb=True),
        _matmul("vec-mat-bf16", "check", (512,), (512, 300), "bfloat16"),
        _matmul("mat-vec-f16", "check", (300, 512), (512,), "float16"),
        _matmul("dot-long-f32", "check", (4096,), (4096,), "float32"),
        _matmul("attn-f16", "check", (2, 12, 77, 64), (2, 12, 64, 77), "float16", tb=True),
        _matmul("broadcast-f32", "check", (2, 1, 40, 64), (3, 64, 50), "float32"),
        _matmul("tokens-weight-bf16", "check", (4, 77, 256), (256, 96), "bfloat16"),
        _matmul("weight-tokens-f32", "check", (96, 256), (4, 256, 77), "float32"),
        _matmul("batched-vec-f32", "check", (5, 7, 300), (300,), "float32"),
        _matmul("vec-batched-f16", "check", (300,), (5, 300, 7), "float16"),
        _matmul("k-zero", "check", (4, 0), (0, 5), "float32"),
        _matmul("dot-empty", "check", (0,), (0,), "float32"),
        _matmul("batch-empty", "check", (0, 4, 8), (8, 5), "float16"),
        _matmul("bench-square-bf16", "bench", (4096, 4096), (4096, 4096), "bfloat16"),
        _matmul("bench-tokens-f16", "bench", (8, 2048, 4096), (4096, 4096), "float16"),
        _matmul("bench-attn-f16", "bench", (32, 16, 1024, 128), (32, 16, 128, 1024), "float16", tb=True),
        _matmul("bench-f32", "bench", (2048, 2048), (2048, 2048), "float32"),
    ],
}
