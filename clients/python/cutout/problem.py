"""Typed API errors: every non-2xx answer becomes a :class:`CutoutProblem` carrying the
problem+json fields (SPEC.md §7), so callers branch on ``code`` and ``field`` rather than on
messages."""

from __future__ import annotations

import json
import math
import time
from email.utils import parsedate_to_datetime
from typing import Any, Mapping

import httpx


class CutoutProblem(Exception):
    """An API error (or a job that ended failed): ``status``, the stable ``code`` (e.g.
    ``invalid_input``, ``quota_exhausted``, ``rate_limit_exceeded``), the ``field`` at fault when the
    API names one, whether it is ``retryable``, the ``request_id`` to quote to support, the human
    ``detail``, and ``retry_after`` (seconds) when the answer carried ``Retry-After``."""

    def __init__(
        self,
        status: int,
        body: Mapping[str, Any] | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        body = body or {}
        self.status = status
        self.code: str = body.get("code") or f"http_{status}"
        self.field: str | None = body.get("field")
        self.request_id: str | None = body.get("requestId")
        retryable = body.get("retryable")
        self.retryable: bool = retryable if isinstance(retryable, bool) else status == 429 or status >= 500
        self.title: str = body.get("title") or f"HTTP {status}"
        self.detail: str = body.get("detail") or self.title
        self.type: str | None = body.get("type")
        self.retry_after = retry_after
        self.body = dict(body)
        where = f" ({self.field})" if self.field else ""
        super().__init__(f"{self.code}{where}: {self.detail}")

    @classmethod
    def from_response(cls, response: httpx.Response) -> CutoutProblem:
        """Reads an error answer (problem+json or anything else) that has been read in full."""
        try:
            parsed = json.loads(response.content or b"null")
        except ValueError:
            parsed = None
        body: dict[str, Any] = dict(parsed) if isinstance(parsed, dict) else {}
        if not body.get("detail") and parsed is None and response.content:
            body["detail"] = response.content[:300].decode("utf-8", "replace")
        body.setdefault("requestId", response.headers.get("x-request-id"))
        return cls(response.status_code, body, retry_after=retry_after_seconds(response.headers))


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    if raw.isdigit():
        return float(raw)
    try:
        at = parsedate_to_datetime(raw).timestamp()
    except (TypeError, ValueError):
        return None
    return float(max(0, math.ceil(at - (time.time() if now is None else now))))
