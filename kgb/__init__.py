"""kgb: a benchmark of how well LLMs and coding agents write Triton GPU kernels."""
