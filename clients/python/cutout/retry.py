"""Retries (SPEC.md §7), as the TypeScript SDK makes them: 429 (the request was not processed)
after ``Retry-After``, the full wait; 500, 502, 503 and 504 and network failures only for idempotent
requests (safe methods, or a POST carrying an ``Idempotency-Key``, which the API replays instead
of doing twice). Never an answer whose problem body says ``retryable: false``, and never one whose
``Retry-After`` is longer than ``max_retry_after`` (an allowance that resets in hours): those go back
to the caller as a :class:`~cutout.CutoutProblem` with ``retry_after``. Without ``Retry-After``
the wait is exponential backoff with full jitter, so many clients do not retry in step.

Only the decisions live here; the sync and async transports do the waiting."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Callable

import httpx

from ._schema import RETRY_RULES
from .problem import retry_after_seconds

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRYABLE_5XX = frozenset({500, 502, 503, 504})


@dataclass(frozen=True)
class RetryOptions:
    """``max_retries`` attempts after the first (0 turns retries off); the first backoff ceiling
    ``base_delay`` (doubling per attempt) up to ``max_delay``; the longest ``Retry-After`` worth
    waiting for, ``max_retry_after`` (a per-minute rate window). All in seconds. ``on_retry`` is
    told ``(attempt, delay, status_or_error)`` before each wait."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    on_retry: Callable[[int, float, object], None] | None = field(default=None, compare=False)


def _template(path: str) -> re.Pattern[str]:
    """``/v1/jobs/{id}`` → a pattern matching ``/v1/jobs/<one segment>``, whole."""
    return re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$")


#: The document's operations as patterns (generated ``RETRY_RULES``), literal paths first.
_RULES = sorted(
    ((method, _template(path), rule) for method, path, rule in RETRY_RULES),
    key=lambda r: r[1].pattern.count("[^/]+"),
)


def retry_rule(method: str, path: str) -> str:
    """How /openapi.json says ``method path`` may be repeated (``x-cutout-retry``):
    ``idempotency-key``, ``safe`` or ``once``; a path it does not know by its method."""
    for m, pattern, rule in _RULES:
        if m == method and pattern.match(path):
            return rule
    return "safe" if method in IDEMPOTENT_METHODS else "once"


def is_idempotent(request: httpx.Request) -> bool:
    if request.method in IDEMPOTENT_METHODS or "idempotency-key" in request.headers:
        return True
    return retry_rule(request.method, request.url.path) == "safe"


def backoff(attempt: int, options: RetryOptions, rand: Callable[[], float] = random.random) -> float:
    """Full jitter: a uniform wait between 0 and the exponential ceiling."""
    return rand() * min(options.max_delay, options.base_delay * 2**attempt)


def _says_retryable(response: httpx.Response) -> bool | None:
    if "json" not in response.headers.get("content-type", ""):
        return None
    try:
        value = json.loads(response.content).get("retryable")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None


def next_delay(
    request: httpx.Request,
    outcome: httpx.Response | BaseException,
    attempt: int,
    options: RetryOptions,
) -> float | None:
    """The wait before the next attempt, or None when this outcome is final. A response must
    have been read (its body decides ``retryable``)."""
    if attempt >= options.max_retries:
        return None
    if isinstance(outcome, httpx.Response):
        status = outcome.status_code
        if not (status == 429 or (status in RETRYABLE_5XX and is_idempotent(request))):
            return None
        if _says_retryable(outcome) is False:
            return None
        after = retry_after_seconds(outcome.headers)
        if after is not None:
            return None if after > options.max_retry_after else after
    elif not isinstance(outcome, httpx.TransportError) or not is_idempotent(request):
        return None
    return backoff(attempt, options)
