"""The transport under both clients: the bearer credential (to the API's own origin only), an
``Idempotency-Key`` made for each creation POST (fixed once, so every retry carries the same key
and the API replays the first answer instead of doing the work twice), retries (retry.py), and the
answer read as its operation declares (JSON, nothing, bytes, or an event stream). The sync and
async transports share everything but the waiting and the I/O."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Union
from urllib.parse import quote, urljoin, urlsplit

import httpx

from .problem import CutoutProblem
from .retry import RetryOptions, next_delay, retry_rule

#: A multipart body: field → a string, bytes, a ``(filename, bytes, content_type)`` tuple, or a
#: list of those for a repeated field.
Part = Union[str, bytes, tuple[str, bytes, str]]
Multipart = Mapping[str, Union[Part, list[Part]]]


@dataclass(frozen=True)
class Binary:
    """An answer that is not JSON (an image, an archive): its bytes and media type."""

    content: bytes
    content_type: str


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: its id (for ``Last-Event-ID``), type and data."""

    id: str | None
    event: str
    data: str


class SseParser:
    """``text/event-stream`` (WHATWG HTML §9.2.6) line by line; comments and retry lines ignored.
    Lines may keep their line ending (httpx 0.23 keeps it, later versions strip it)."""

    def __init__(self) -> None:
        self._id: str | None = None
        self._event: str | None = None
        self._data: list[str] | None = None

    def feed(self, line: str) -> SseEvent | None:
        line = line.rstrip("\r\n")
        if line == "":
            event = None
            if self._data is not None:
                event = SseEvent(self._id, self._event or "message", "\n".join(self._data))
            self._id, self._event, self._data = None, None, None
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data = [*(self._data or []), value]
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        return None


class _Base:
    def __init__(self, base_url: str, api_key: str | None, retry: RetryOptions | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.retry = retry or RetryOptions(max_retries=0)
        self._origin = _origin(self.base_url)

    def build(
        self,
        method: str,
        path: str,
        *,
        path_params: Mapping[str, str] | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        json: Any = None,
        multipart: Multipart | None = None,
        content: bytes | None = None,
        content_type: str | None = None,
    ) -> httpx.Request:
        for name, value in (path_params or {}).items():
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        url = urljoin(self.base_url + "/", path.lstrip("/")) if not _absolute(path) else path
        sent = {k.lower(): v for k, v in (headers or {}).items() if v is not None}
        if "idempotency-key" not in sent and retry_rule(method, urlsplit(url).path) == "idempotency-key":
            sent["idempotency-key"] = str(uuid.uuid4())
        if content is not None and content_type:
            sent["content-type"] = content_type
        if self.api_key and _origin(url) == self._origin:
            sent["authorization"] = f"Bearer {self.api_key}"
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        files = _multipart_parts(multipart) if multipart is not None else None
        return httpx.Request(
            method, url, params=params or None, headers=sent, json=json, content=content, files=files
        )

    @staticmethod
    def read(kind: str, response: httpx.Response) -> Any:
        if not response.is_success:
            raise CutoutProblem.from_response(response)
        if kind == "json":
            return response.json()
        if kind == "binary":
            return Binary(response.content, response.headers.get("content-type", "application/octet-stream"))
        return None


class Transport(_Base):
    def __init__(
        self, base_url: str, api_key: str | None, retry: RetryOptions | None, client: httpx.Client
    ) -> None:
        super().__init__(base_url, api_key, retry)
        self.client = client

    def send(self, request: httpx.Request) -> httpx.Response:
        """One logical request with retries; the answer is read in full."""
        for attempt in range(self.retry.max_retries + 1):
            try:
                outcome: httpx.Response | BaseException = self.client.send(request)
            except httpx.TransportError as err:
                outcome = err
            delay = next_delay(request, outcome, attempt, self.retry)
            if delay is None:
                if isinstance(outcome, BaseException):
                    raise outcome
                return outcome
            if self.retry.on_retry:
                self.retry.on_retry(attempt + 1, delay, getattr(outcome, "status_code", outcome))
            time.sleep(delay)
        raise AssertionError("unreachable")

    def call(self, method: str, path: str, kind: str, **parts: Any) -> Any:
        return self.read(kind, self.send(self.build(method, path, **parts)))

    def events(self, method: str, path: str, kind: str, **parts: Any) -> Iterator[SseEvent]:
        """The stream's events as they arrive; it raises a CutoutProblem when it cannot be opened."""
        request = self.build(method, path, **parts)
        request.headers["accept"] = "text/event-stream"
        response = self.client.send(request, stream=True)
        try:
            if not response.is_success:
                response.read()
                raise CutoutProblem.from_response(response)
            parser = SseParser()
            for line in response.iter_lines():
                event = parser.feed(line)
                if event:
                    yield event
        finally:
            response.close()


class AsyncTransport(_Base):
    def __init__(
        self, base_url: str, api_key: str | None, retry: RetryOptions | None, client: httpx.AsyncClient
    ) -> None:
        super().__init__(base_url, api_key, retry)
        self.client = client

    async def send(self, request: httpx.Request) -> httpx.Response:
        for attempt in range(self.retry.max_retries + 1):
            try:
                outcome: httpx.Response | BaseException = await self.client.send(request)
            except httpx.TransportError as err:
                outcome = err
            delay = next_delay(request, outcome, attempt, self.retry)
            if delay is None:
                if isinstance(outcome, BaseException):
                    raise outcome
                return outcome
            if self.retry.on_retry:
                self.retry.on_retry(attempt + 1, delay, getattr(outcome, "status_code", outcome))
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def call(self, method: str, path: str, kind: str, **parts: Any) -> Any:
        request = self.build(method, path, **parts)
        return self.read(kind, await self.send(request))

    async def events(self, method: str, path: str, kind: str, **parts: Any) -> AsyncIterator[SseEvent]:
        request = self.build(method, path, **parts)
        request.headers["accept"] = "text/event-stream"
        response = await self.client.send(request, stream=True)
        try:
            if not response.is_success:
                await response.aread()
                raise CutoutProblem.from_response(response)
            parser = SseParser()
            async for line in response.aiter_lines():
                event = parser.feed(line)
                if event:
                    yield event
        finally:
            await response.aclose()


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def _absolute(path: str) -> bool:
    return bool(urlsplit(path).scheme)


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _multipart_parts(multipart: Multipart) -> list[tuple[str, Any]]:
    """Every field as a part, so the body is multipart even without a file (httpx sends text-only
    ``data`` as a urlencoded form): text as a part without a filename, bytes and
    ``(filename, bytes, type)`` as files; a list value repeats its field."""
    parts: list[tuple[str, Any]] = []
    for name, value in multipart.items():
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, str):
                parts.append((name, (None, part.encode())))
            elif isinstance(part, bytes):
                parts.append((name, (name, part, "application/octet-stream")))
            else:
                parts.append((name, part))
    return parts
