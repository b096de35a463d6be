"""``Cutout`` and ``AsyncCutout``: every operation of the API typed on ``.api`` (generated,
_operations.py), behind one transport that adds the bearer key, an ``Idempotency-Key`` on creation
POSTs, and retries; plus the calls most programs need, in the TypeScript SDK's shape: uploads,
removals, try-ons, catalog images, jobs (waiting on the event stream with ``Last-Event-ID``), usage
and keys, and ``remove_background(path_or_bytes)`` that does all of it and returns the job and the
bytes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict
from urllib.parse import quote, urljoin

import httpx

from ._image import UPLOAD_TYPES, ImageInput, read_image, sniff_image_type
from ._operations import Api, AsyncApi
from ._schema import (
    DEFAULT_REMOVAL_OPTIONS,
    TERMINAL_STATUSES,
    ApiKey,
    ApiKeyCreated,
    Batch,
    CatalogImageList,
    Job,
    JobList,
    RemovalOptions,
    TryOnOptions,
    Upload,
    Usage,
)
from ._transport import AsyncTransport, Binary, Multipart, Part, SseEvent, Transport
from .problem import CutoutProblem
from .retry import RetryOptions

#: The removal options' defaults, the API's own (generated from src/contract); anything given replaces them.
DEFAULT_OPTIONS: RemovalOptions = DEFAULT_REMOVAL_OPTIONS
#: Reopenings of a stream that broke off, in a row without a new event, before polling instead.
MAX_RECONNECTS = 3
#: The longest ``Prefer: wait`` the API honours (s): a quick job finishes inside the call.
MAX_PREFER_WAIT = 8


@dataclass(frozen=True)
class RemoveResult:
    """What ``remove_background`` returns: the finished job and its result image."""

    job: Job
    content: bytes
    content_type: str


class CatalogImageOptions(TypedDict, total=False):
    """The fields of POST /v1/catalog-images besides the references, each optional (the API's
    defaults: 1024×1024, ``soft``, ``hero``, ``#FFFFFF``, a random seed), numbers as ``int``; each
    is sent as its multipart part (tests/test_stack.py holds names and types to the contract's
    ``CatalogImageMultipart``)."""

    #: At most 4000 characters; recorded, passed to generative backends.
    prompt: str
    #: 256–4096 pixels.
    width: int
    height: int
    #: 1–100, for generative backends.
    steps: int
    #: 0–4294967295: an earlier image's seed, with the same references and fields, makes it again.
    seed: int
    #: ``#RRGGBB``.
    background: str
    shadow: Literal["none", "soft", "hard", "floating"]
    #: ``hero``: the front view alone; ``views``: every reference in one row.
    layout: Literal["hero", "views"]


@dataclass(frozen=True)
class CatalogImageResult:
    """A catalog image: its PNG, its id, the seed that makes it again, and where it can be read
    again for 24 hours (with the credential)."""

    id: str
    seed: int
    content: bytes
    content_type: str
    url: str


def is_terminal(job: Job) -> bool:
    """Whether the job has ended (it never changes again)."""
    return job["status"] in TERMINAL_STATUSES


def job_problem(job: Job) -> CutoutProblem:
    """A job that ended failed or canceled, as a problem with the job's own error code."""
    error = job.get("error") or {}
    canceled = job["status"] == "canceled"
    code = error.get("code") or ("canceled" if canceled else "processing_failed")
    detail = error.get("message") or f"job {job['id']} ended {job['status']}"
    problem = CutoutProblem(409 if canceled else 500, {"code": code, "detail": detail, "retryable": False})
    problem.job = job  # type: ignore[attr-defined]
    return problem


def _removal_body(upload_id: str | None, source_url: str | None, options: RemovalOptions | None) -> dict[str, Any]:
    if (upload_id is None) == (source_url is None):
        raise ValueError("give exactly one of upload_id or source_url")
    source = {"uploadId": upload_id} if upload_id else {"sourceUrl": source_url}
    return {**source, "options": {**DEFAULT_OPTIONS, **(options or {})}}


def _upload_type(data: bytes, content_type: str | None) -> str:
    declared = (content_type or "").split(";")[0].strip().lower()
    return declared if declared in UPLOAD_TYPES else sniff_image_type(data)


def _catalog_parts(references: Sequence[ImageInput], options: CatalogImageOptions | None) -> Multipart:
    """The multipart body: each reference a file part, in order (named as its file, else
    ``reference-N``), then each field given as text."""
    files: list[Part] = []
    for i, source in enumerate(references):
        data = read_image(source)
        is_bytes = isinstance(source, (bytes, bytearray, memoryview))
        name = f"reference-{i}" if is_bytes else Path(source).name  # type: ignore[arg-type]
        files.append((name, data, sniff_image_type(data)))
    fields = {name: str(value) for name, value in (options or {}).items() if value is not None}
    return {"references": files, **fields}


def _catalog_image(response: httpx.Response, base_url: str) -> CatalogImageResult:
    """A catalog image answer (201 or 200 ``image/png``) read, or its problem raised."""
    if not response.is_success:
        raise CutoutProblem.from_response(response)
    image_id = response.headers.get("x-catalog-image-id", "")
    location = response.headers.get("location") or f"/v1/catalog-images/{image_id}"
    return CatalogImageResult(
        id=image_id,
        seed=int(response.headers["x-generation-seed"]),
        content=response.content,
        content_type=response.headers.get("content-type", "image/png"),
        url=urljoin(base_url + "/", location),
    )


def _timeout_problem(job_id: str) -> CutoutProblem:
    return CutoutProblem(408, {"code": "timeout", "detail": f"job {job_id} did not end in time", "retryable": True})


class _Options:
    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        retry: RetryOptions | Literal[False] | None,
        timeout: float,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = RetryOptions(max_retries=0) if retry is False else retry or RetryOptions()
        # Reads may wait on Prefer: wait and on event streams; connecting must not take long.
        self.timeout = httpx.Timeout(timeout, connect=10.0)
        self.api_key = api_key


class Cutout:
    """The API, synchronously. ``Cutout(base_url, api_key=...)``; use it as a context manager or
    call ``close()``. ``retry=False`` sends each request once."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retry: RetryOptions | Literal[False] | None = None,
        timeout: float = 120.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        o = _Options(base_url, api_key, retry, timeout)
        self.base_url = o.base_url
        self._owns_client = http_client is None
        self._http = http_client or httpx.Client(timeout=o.timeout, follow_redirects=True)
        self._transport = Transport(o.base_url, api_key, o.retry, self._http)
        #: Every operation of /openapi.json, typed: ``cutout.api.list_jobs(limit=5)``.
        self.api = Api(self._transport)

    def __enter__(self) -> Cutout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_client:
            self._http.close()

    def upload(self, source: ImageInput, content_type: str | None = None) -> Upload:
        """A path or bytes → POST /v1/uploads → PUT the content → complete: the ready upload."""
        data = read_image(source)
        kind = _upload_type(data, content_type)
        created = self.api.create_upload({"contentType": kind})  # type: ignore[typeddict-item]
        headers = created.get("uploadHeaders") or {"content-type": kind}
        target = urljoin(self.base_url + "/", created["uploadUrl"])
        put = self._transport.build("PUT", target, headers=headers, content=data)
        self._transport.read("empty", self._transport.send(put))
        return self.api.complete_upload(created["id"])

    def create_removal(
        self,
        upload_id: str | None = None,
        source_url: str | None = None,
        options: RemovalOptions | None = None,
        *,
        wait: int | None = None,
        idempotency_key: str | None = None,
    ) -> Job:
        """POST /v1/removals for an upload or a public URL; ``wait`` (0–8 s) lets a quick job end
        inside the call. An idempotency key is made when none is given."""
        body = _removal_body(upload_id, source_url, options)
        prefer = f"wait={wait}" if wait else None
        return self.api.create_removal(body, idempotency_key=idempotency_key, prefer=prefer)  # type: ignore[arg-type]

    def get_job(self, job_id: str) -> Job:
        return self.api.get_job(job_id)

    def list_jobs(self, **query: Any) -> JobList:
        return self.api.list_jobs(**query)

    def cancel_job(self, job_id: str) -> Job:
        return self.api.cancel_job(job_id)

    def create_batch(self, upload_ids: list[str], options: RemovalOptions | None = None) -> Batch:
        return self.api.create_batch({"uploadIds": upload_ids, "options": {**DEFAULT_OPTIONS, **(options or {})}})

    def get_batch(self, batch_id: str) -> Batch:
        return self.api.get_batch(batch_id)

    def usage(self) -> Usage:
        return self.api.get_usage()  # type: ignore[return-value]

    def list_api_keys(self) -> list[ApiKey]:
        return self.api.list_api_keys()["keys"]  # type: ignore[index,no-any-return]

    def create_api_key(self, **body: Any) -> ApiKeyCreated:
        return self.api.create_api_key(body)  # type: ignore[arg-type]

    def revoke_api_key(self, key_id: str) -> None:
        self.api.revoke_api_key(key_id)

    def follow_events(self, job_id: str, last_event_id: str | None = None) -> Iterator[SseEvent]:
        """The job's events (after ``last_event_id``) until its stream ends, reopened with
        ``Last-Event-ID`` after the last event seen when it breaks off (SPEC.md §6), up to
        MAX_RECONNECTS times in a row without a new event; then it raises the last error."""
        last_id = last_event_id
        failures = 0
        while True:
            before = last_id
            try:
                for event in self.api.stream_job_events(job_id, last_event_id=last_id):
                    last_id = event.id or last_id
                    yield event
                return
            except (httpx.TransportError, CutoutProblem) as err:
                if isinstance(err, CutoutProblem) and not err.retryable:
                    raise
                failures = 1 if last_id != before else failures + 1
                if failures > MAX_RECONNECTS:
                    raise
                time.sleep(0.5 * failures)

    def wait_for_job(
        self,
        job_id: str,
        *,
        timeout: float = 600.0,
        on_event: Callable[[SseEvent], None] | None = None,
        poll: bool = False,
    ) -> Job:
        """The job once it has ended: its event stream followed (the job read again at its end,
        since events only say that something happened), else polled, for at most ``timeout`` s."""
        deadline = time.monotonic() + timeout
        job = self.get_job(job_id)
        last_id: str | None = None
        # The stream ends once the job has ended; one that ends before (a proxy closing it) is
        # reopened after the last event seen, a few times, before falling back to polling.
        for _ in range(0 if poll else MAX_RECONNECTS + 1):
            if is_terminal(job):
                return job
            try:
                for event in self.follow_events(job_id, last_id):
                    last_id = event.id or last_id
                    if on_event:
                        on_event(event)
                    if time.monotonic() > deadline:
                        raise _timeout_problem(job_id)
            except (httpx.TransportError, CutoutProblem) as err:
                if isinstance(err, CutoutProblem) and err.code == "timeout":
                    raise
                break
            finally:
                job = self.get_job(job_id)
        delay = 1.0
        while not is_terminal(job):
            if time.monotonic() + delay > deadline:
                raise _timeout_problem(job_id)
            time.sleep(delay)
            delay = min(5.0, delay * 1.5)
            job = self.get_job(job_id)
        return job

    def download_result(self, job: Job) -> Binary:
        """The bytes of a succeeded job's result (the signed URL, else the result route)."""
        url = (job.get("result") or {}).get("url") or f"/v1/jobs/{job['id']}/result"
        request = self._transport.build("GET", urljoin(self.base_url + "/", url))
        return self._transport.read("binary", self._transport.send(request))  # type: ignore[no-any-return]

    def _finished(self, created: Job, timeout: float) -> RemoveResult:
        """A job just created, waited for if it is still running, and its result downloaded; a job that
        ended failed or canceled raises its problem."""
        job = created if is_terminal(created) else self.wait_for_job(created["id"], timeout=timeout)
        if job["status"] != "succeeded":
            raise job_problem(job)
        result = self.download_result(job)
        return RemoveResult(job, result.content, result.content_type)

    def remove_background(
        self,
        source: ImageInput,
        options: RemovalOptions | None = None,
        *,
        content_type: str | None = None,
        timeout: float = 600.0,
    ) -> RemoveResult:
        """Upload, remove, wait, download: the cutout of a path or bytes in one call. A job that
        ends failed or canceled raises a CutoutProblem with the job's error code."""
        upload = self.upload(source, content_type)
        created = self.create_removal(upload["id"], options=options, wait=MAX_PREFER_WAIT)
        return self._finished(created, timeout)

    def try_on(
        self,
        person: ImageInput,
        garment: ImageInput,
        options: TryOnOptions,
        *,
        timeout: float = 600.0,
    ) -> RemoveResult:
        """Upload both photos, try the garment on (experimental), wait, download: the try-on image
        in one call, its notices in ``job["warnings"]``. A job that ends failed or canceled raises a
        CutoutProblem with the job's error code."""
        body = {"person": {"uploadId": self.upload(person)["id"]}, "garment": {"uploadId": self.upload(garment)["id"]}}
        created = self.api.create_virtual_try_on(
            {**body, "options": options},  # type: ignore[typeddict-item]
            prefer=f"wait={MAX_PREFER_WAIT}",
        )
        return self._finished(created, timeout)

    def create_catalog_image(
        self,
        references: Sequence[ImageInput],
        options: CatalogImageOptions | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> CatalogImageResult:
        """POST /v1/catalog-images: a product photo from one to four references (paths or bytes:
        front, back, side, detail), sent in the request, in order. The API makes it while the call
        waits, so this one call is the whole of it. An ``Idempotency-Key`` is made unless one is
        given, and every retry carries it: a retried call returns the first image, charged once. A
        reference the API refuses raises a CutoutProblem naming it (``references.1``: the second)."""
        multipart = _catalog_parts(references, options)
        headers = {"idempotency-key": idempotency_key}
        request = self._transport.build("POST", "/v1/catalog-images", headers=headers, multipart=multipart)
        return _catalog_image(self._transport.send(request), self.base_url)

    def get_catalog_image(self, image_id: str) -> CatalogImageResult:
        """GET /v1/catalog-images/{id}: a catalog image this workspace made, again (for 24 hours)."""
        request = self._transport.build("GET", f"/v1/catalog-images/{quote(image_id, safe='')}")
        return _catalog_image(self._transport.send(request), self.base_url)

    def list_catalog_images(self, **query: Any) -> CatalogImageList:
        """The workspace's catalog images, newest first, with the fields and seed each was made with."""
        return self.api.list_catalog_images(**query)


class AsyncCutout:
    """The API for asyncio: the same calls as :class:`Cutout`, as coroutines."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retry: RetryOptions | Literal[False] | None = None,
        timeout: float = 120.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        o = _Options(base_url, api_key, retry, timeout)
        self.base_url = o.base_url
        self._owns_client = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=o.timeout, follow_redirects=True)
        self._transport = AsyncTransport(o.base_url, api_key, o.retry, self._http)
        #: Every operation of /openapi.json, typed: ``await cutout.api.list_jobs(limit=5)``.
        self.api = AsyncApi(self._transport)

    async def __aenter__(self) -> AsyncCutout:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_client:
            await self._http.aclose()

    async def upload(self, source: ImageInput, content_type: str | None = None) -> Upload:
        data = read_image(source)
        kind = _upload_type(data, content_type)
        created = await self.api.create_upload({"contentType": kind})  # type: ignore[typeddict-item]
        headers = created.get("uploadHeaders") or {"content-type": kind}
        target = urljoin(self.base_url + "/", created["uploadUrl"])
        put = self._transport.build("PUT", target, headers=headers, content=data)
        self._transport.read("empty", await self._transport.send(put))
        return await self.api.complete_upload(created["id"])

    async def create_removal(
        self,
        upload_id: str | None = None,
        source_url: str | None = None,
        options: RemovalOptions | None = None,
        *,
        wait: int | None = None,
        idempotency_key: str | None = None,
    ) -> Job:
        body = _removal_body(upload_id, source_url, options)
        prefer = f"wait={wait}" if wait else None
        return await self.api.create_removal(body, idempotency_key=idempotency_key, prefer=prefer)  # type: ignore[arg-type]

    async def get_job(self, job_id: str) -> Job:
        return await self.api.get_job(job_id)

    async def list_jobs(self, **query: Any) -> JobList:
        return await self.api.list_jobs(**query)

    async def cancel_job(self, job_id: str) -> Job:
        return await self.api.cancel_job(job_id)

    async def create_batch(self, upload_ids: list[str], options: RemovalOptions | None = None) -> Batch:
        body = {"uploadIds": upload_ids, "options": {**DEFAULT_OPTIONS, **(options or {})}}
        return await self.api.create_batch(body)  # type: ignore[arg-type]

    async def get_batch(self, batch_id: str) -> Batch:
        return await self.api.get_batch(batch_id)

    async def usage(self) -> Usage:
        return await self.api.get_usage()  # type: ignore[return-value]

    async def list_api_keys(self) -> list[ApiKey]:
        return (await self.api.list_api_keys())["keys"]  # type: ignore[index,no-any-return]

    async def create_api_key(self, **body: Any) -> ApiKeyCreated:
        return await self.api.create_api_key(body)  # type: ignore[arg-type]

    async def revoke_api_key(self, key_id: str) -> None:
        await self.api.revoke_api_key(key_id)

    async def follow_events(self, job_id: str, last_event_id: str | None = None) -> AsyncIterator[SseEvent]:
        """As :meth:`Cutout.follow_events`."""
        last_id = last_event_id
        failures = 0
        while True:
            before = last_id
            try:
                async for event in self.api.stream_job_events(job_id, last_event_id=last_id):
                    last_id = event.id or last_id
                    yield event
                return
            except (httpx.TransportError, CutoutProblem) as err:
                if isinstance(err, CutoutProblem) and not err.retryable:
                    raise
                failures = 1 if last_id != before else failures + 1
                if failures > MAX_RECONNECTS:
                    raise
                await asyncio.sleep(0.5 * failures)

    async def wait_for_job(
        self,
        job_id: str,
        *,
        timeout: float = 600.0,
        on_event: Callable[[SseEvent], None] | None = None,
        poll: bool = False,
    ) -> Job:
        """As :meth:`Cutout.wait_for_job`."""
        try:
            return await asyncio.wait_for(self._wait(job_id, on_event, poll), timeout)
        except asyncio.TimeoutError:
            raise _timeout_problem(job_id) from None

    async def _wait(self, job_id: str, on_event: Callable[[SseEvent], None] | None, poll: bool) -> Job:
        job = await self.get_job(job_id)
        last_id: str | None = None
        for _ in range(0 if poll else MAX_RECONNECTS + 1):
            if is_terminal(job):
                return job
            try:
                async for event in self.follow_events(job_id, last_id):
                    last_id = event.id or last_id
                    if on_event:
                        on_event(event)
            except (httpx.TransportError, CutoutProblem):
                break
            finally:
                job = await self.get_job(job_id)
        delay = 1.0
        while not is_terminal(job):
            await asyncio.sleep(delay)
            delay = min(5.0, delay * 1.5)
            job = await self.get_job(job_id)
        return job

    async def download_result(self, job: Job) -> Binary:
        url = (job.get("result") or {}).get("url") or f"/v1/jobs/{job['id']}/result"
        request = self._transport.build("GET", urljoin(self.base_url + "/", url))
        return self._transport.read("binary", await self._transport.send(request))  # type: ignore[no-any-return]

    async def _finished(self, created: Job, timeout: float) -> RemoveResult:
        """As :meth:`Cutout._finished`."""
        job = created if is_terminal(created) else await self.wait_for_job(created["id"], timeout=timeout)
        if job["status"] != "succeeded":
            raise job_problem(job)
        result = await self.download_result(job)
        return RemoveResult(job, result.content, result.content_type)

    async def remove_background(
        self,
        source: ImageInput,
        options: RemovalOptions | None = None,
        *,
        content_type: str | None = None,
        timeout: float = 600.0,
    ) -> RemoveResult:
        """As :meth:`Cutout.remove_background`."""
        upload = await self.upload(source, content_type)
        created = await self.create_removal(upload["id"], options=options, wait=MAX_PREFER_WAIT)
        return await self._finished(created, timeout)

    async def try_on(
        self,
        person: ImageInput,
        garment: ImageInput,
        options: TryOnOptions,
        *,
        timeout: float = 600.0,
    ) -> RemoveResult:
        """As :meth:`Cutout.try_on`."""
        person_upload, garment_upload = await asyncio.gather(self.upload(person), self.upload(garment))
        created = await self.api.create_virtual_try_on(
            {"person": {"uploadId": person_upload["id"]}, "garment": {"uploadId": garment_upload["id"]}, "options": options},  # type: ignore[typeddict-item]
            prefer=f"wait={MAX_PREFER_WAIT}",
        )
        return await self._finished(created, timeout)

    async def create_catalog_image(
        self,
        references: Sequence[ImageInput],
        options: CatalogImageOptions | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> CatalogImageResult:
        """As :meth:`Cutout.create_catalog_image`."""
        multipart = _catalog_parts(references, options)
        headers = {"idempotency-key": idempotency_key}
        request = self._transport.build("POST", "/v1/catalog-images", headers=headers, multipart=multipart)
        return _catalog_image(await self._transport.send(request), self.base_url)

    async def get_catalog_image(self, image_id: str) -> CatalogImageResult:
        """As :meth:`Cutout.get_catalog_image`."""
        request = self._transport.build("GET", f"/v1/catalog-images/{quote(image_id, safe='')}")
        return _catalog_image(await self._transport.send(request), self.base_url)

    async def list_catalog_images(self, **query: Any) -> CatalogImageList:
        return await self.api.list_catalog_images(**query)
