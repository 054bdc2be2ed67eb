"""The host side of the sampling family's random streams: a seed per call, from PyTorch's
initial seed (or the generator's) and a call counter, so that two calls draw different
samples and a run repeats after torch.manual_seed. The kernels draw with Triton's Philox
(`tl.rand(seed, offsets)`) from it."""

import itertools

import torch

_calls = itertools.count(1)


def _seed(generator) -> int:
    base = generator.initial_seed() if generator is not None else torch.initial_seed()
    # a new stream per call, reproducible after torch.manual_seed
    return (base * 0x9E3779B1 + next(_calls) * 0x85EBCA77) % (1 << 62)
