"""How a model call fails: one attempt's failure, and the failures that end a trial.

A provider raises `CallFailed` for an attempt that got no reply; `retryable` says whether
another attempt may succeed (408/409/429/5xx/529, timeouts, dropped connections and
malformed bodies; a retry-after header gives the wait) and `outage` whether the provider,
not the request, is at fault. `sdk_failure`, `malformed` and `retry_after` build one from
what the anthropic and openai SDKs raise or send; `WallClockReached` is the wrapper's own,
an attempt cut at its caller's deadline. A call that still fails after the wrapper's
retries (model.py) raises `ModelCallFailed`, or `ProviderUnavailable` where it was an outage.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# Refusals that say nothing about the request a method built: the key, the account or the
# model's availability changed under the run. Like an outage, they end a trial as an
# infrastructure failure that a re-run retries.
ACCESS_STATUS = frozenset({401, 403, 404})


class CallFailed(Exception):
    """One attempt failed; `retryable` says whether another attempt may succeed."""

    def __init__(self, message: str, retryable: bool, retry_after_s: float | None = None, status: int | None = None):
        super().__init__(message)
        self.message, self.retryable, self.retry_after_s = message, retryable, retry_after_s
        self.status = status  # the HTTP status, where there was a response

    @property
    def outage(self) -> bool:
        """Whether the provider, not the request, is at fault (down, overloaded, or access lost)."""
        return self.retryable or self.status in ACCESS_STATUS


class WallClockReached(CallFailed):
    """The caller's deadline (an agent trial's wall clock) came before a reply: the attempt
    was cut there, and no other is made."""

    def __init__(self, message: str):
        super().__init__(message, retryable=False)

    @property
    def outage(self) -> bool:
        return False


class ModelCallFailed(Exception):
    """A call failed for good (after its retries): it ends the trial, not the job."""


class ProviderUnavailable(ModelCallFailed):
    """The provider was down or refused access after every retry: no verdict on the method,
    so the trial ends as an infrastructure failure and a re-run retries it."""


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from retry-after-ms, or retry-after as seconds or an HTTP date."""
    if value := headers.get("retry-after-ms"):
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(email.utils.parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def sdk_failure(error: Exception, sdk: Any) -> CallFailed:
    """Translate an exception of the anthropic or openai SDK (they share this shape)."""
    if isinstance(error, sdk.APIStatusError):
        status = error.status_code
        retryable = status in RETRYABLE_STATUS or status >= 500
        return CallFailed(f"HTTP {status}: {error.message}", retryable, retry_after(error.response.headers), status)
    if isinstance(error, sdk.APITimeoutError):
        return CallFailed("timed out", retryable=True)
    if isinstance(error, sdk.APIConnectionError):
        return CallFailed(f"connection failed: {error}", retryable=True)
    return CallFailed(f"malformed response: {error}", retryable=True)


def malformed(body: str, why: str) -> CallFailed:
    """A 200 whose body is not what the API sends: retried, as a proxy glitch would be."""
    return CallFailed(f"malformed response ({why}): {body[:200]!r}", retryable=True)

