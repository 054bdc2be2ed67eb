"""Shared references and input builders for the vLLM operator specs (attention, cache,
ggml, moe, packing, quant), and the generator of the vLLM solutions that share kernel code
(`generate`: each from its own part under `solutions/` and the shared kernels under
`kernels/` it imports)."""
