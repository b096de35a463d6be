"""Against a real HTTP server on 127.0.0.1 that answers as told: ``Retry-After`` is honoured
(429, then success), a 503 on a creation POST is retried with the same idempotency key, and on
completing an upload (safe to repeat) but not on creating one, neither a
``Retry-After`` longer than the client waits for nor ``retryable: false`` is retried, and a job's
event stream that ends before the job is reopened with ``Last-Event-ID``."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cutout import AsyncCutout, Cutout, CutoutProblem, RetryOptions, retry_after_seconds

JOB = {"id": "j1", "kind": "remove_background", "status": "queued"}


class Script:
    """The answers to give, in order; the requests seen."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.seen: list[dict[str, str]] = []


def serve(script: Script):
    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            script.seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
            status, headers, body = script.answers.pop(0)
            raw = isinstance(body, bytes)  # an event stream, ended by closing the connection
            data = body if raw else json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers}.items():
                self.send_header(name, value)
            if not raw:
                self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def scripted():
    servers = []

    def start(*answers):
        script = Script(answers)
        server, url = serve(script)
        servers.append(server)
        return script, url

    yield start
    for server in servers:
        server.shutdown()


def limited(seconds: str):
    return (429, {"retry-after": seconds}, {"code": "rate_limit_exceeded", "retryable": True})


def test_waits_retry_after_then_succeeds(scripted):
    script, url = scripted(limited("1"), (200, {}, JOB))
    told = []
    options = RetryOptions(on_retry=lambda attempt, delay, status: told.append((attempt, delay, status)))
    started = time.monotonic()
    with Cutout(url, "sk_test", retry=options) as client:
        assert client.get_job("j1")["id"] == "j1"
    assert time.monotonic() - started >= 1.0
    assert told == [(1, 1.0, 429)]
    assert [s["authorization"] for s in script.seen] == ["Bearer sk_test"] * 2


def test_async_client_waits_retry_after_too(scripted):
    _, url = scripted(limited("1"), (200, {}, JOB))

    async def run():
        async with AsyncCutout(url, "sk_test") as client:
            return await client.get_job("j1")

    started = time.monotonic()
    assert asyncio.run(run())["id"] == "j1"
    assert time.monotonic() - started >= 1.0


def test_retries_a_create_after_503_with_the_same_idempotency_key(scripted):
    script, url = scripted((503, {}, {"code": "service_unavailable"}), (202, {}, JOB))
    with Cutout(url, "sk_test", retry=RetryOptions(base_delay=0.01)) as client:
        assert client.create_removal(source_url="https://images.example.com/a.jpg")["id"] == "j1"
    keys = [s["idempotency-key"] for s in script.seen]
    assert len(keys) == 2 and keys[0] == keys[1]


def test_retries_completing_an_upload_after_503_but_not_creating_one(scripted):
    upload = {"id": "u1", "status": "ready"}
    script, url = scripted((503, {}, {"code": "inference_unavailable"}), (200, {}, upload))
    with Cutout(url, "sk_test", retry=RetryOptions(base_delay=0.01)) as client:
        assert client.api.complete_upload("u1")["status"] == "ready"
    assert [s["path"] for s in script.seen] == ["/v1/uploads/u1/complete"] * 2
    script, url = scripted((503, {}, {"code": "inference_unavailable"}))
    with Cutout(url, "sk_test", retry=RetryOptions(base_delay=0.01)) as client, pytest.raises(CutoutProblem):
        client.api.create_upload({"contentType": "image/png"})
    assert len(script.seen) == 1


def test_does_not_wait_a_retry_after_longer_than_allowed(scripted):
    script, url = scripted(limited("3600"))
    with Cutout(url, "sk_test") as client, pytest.raises(CutoutProblem) as caught:
        client.get_job("j1")
    assert (caught.value.code, caught.value.retry_after, len(script.seen)) == ("rate_limit_exceeded", 3600, 1)


def test_does_not_retry_an_answer_that_says_retryable_false(scripted):
    script, url = scripted((503, {}, {"code": "unavailable", "retryable": False}))
    with Cutout(url, "sk_test", retry=RetryOptions(base_delay=0.01)) as client, pytest.raises(CutoutProblem) as caught:
        client.get_job("j1")
    assert (caught.value.retryable, len(script.seen)) == (False, 1)


def test_retry_after_as_an_http_date():
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470) == 10
    assert retry_after_seconds({"retry-after": "soon"}) is None


def events(*pairs: tuple[str, str]) -> tuple[int, dict[str, str], bytes]:
    text = "".join(f"id: {i}\nevent: {kind}\ndata: {{}}\n\n" for i, kind in pairs)
    return 200, {"content-type": "text/event-stream"}, (": open\n\n" + text).encode()


def test_reopens_a_job_stream_that_ends_early_after_the_last_event_seen(scripted):
    script, url = scripted(
        (200, {}, JOB),
        events(("e1", "image.job.created.v1"), ("e2", "image.job.progress.v1")),
        (200, {}, {**JOB, "status": "processing"}),
        events(("e3", "image.job.completed.v1")),
        (200, {}, {**JOB, "status": "succeeded"}),
    )
    seen = []
    with Cutout(url, "sk_test") as client:
        job = client.wait_for_job("j1", on_event=seen.append)
    assert job["status"] == "succeeded"
    assert [e.id for e in seen] == ["e1", "e2", "e3"]
    streams = [s for s in script.seen if s["path"].endswith("/events")]
    assert [s.get("last-event-id") for s in streams] == [None, "e2"]
    assert all(s["accept"] == "text/event-stream" for s in streams)


def test_every_operation_is_sent_and_retried_as_the_document_says():
    """For every operation of /openapi.json (the generated ``RETRY_RULES``, held to the document
    by the staleness test): a creation with ``x-cutout-retry: idempotency-key`` gets a key, and a
    5xx is retried exactly where the rule allows (``idempotency-key`` or ``safe``), never for
    ``once``. No route list is kept by hand."""
    from cutout._schema import RETRY_RULES
    from cutout._transport import _Base
    from cutout.retry import is_idempotent

    transport = _Base("http://api.test", "sk_live_x", RetryOptions())
    assert len(RETRY_RULES) > 20
    for method, path, rule in RETRY_RULES:
        request = transport.build(method, path.replace("{", "x").replace("}", ""))
        keyed = "idempotency-key" in request.headers
        assert keyed == (rule == "idempotency-key"), f"{method} {path}: key {keyed}, rule {rule}"
        assert is_idempotent(request) == (rule != "once"), f"{method} {path}: retried, rule {rule}"
