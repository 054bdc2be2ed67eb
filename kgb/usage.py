"""Token usage and cost of model calls, in one canonical form across providers."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more model calls; adds up with `+`.

    Canonical, non-overlapping buckets: `input_tokens` excludes cache reads and writes,
    `output_tokens` includes reasoning tokens (which are also counted, not added, in
    `reasoning_tokens`). So total = input + cache_read + cache_write + output.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens
