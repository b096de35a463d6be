"""The client against the real local stack (``npm start``, the real model): a background removed
in one call from a path, from bytes and through the async client; the job's events followed and
resumed with ``Last-Event-ID``; idempotency keys; errors as typed ``CutoutProblem``s; a try-on and a
catalog image in one call each."""

from __future__ import annotations

import asyncio
import typing
import uuid
from pathlib import Path

import httpx
import pytest
from conftest import png_header

from cutout import SCHEMAS, AsyncCutout, CatalogImageOptions, Cutout, CutoutProblem

RGBA_512 = {"signature": "89504e470d0a1a0a", "width": 512, "height": 512, "colour_type": 6}


@pytest.fixture
def cutout(stack):
    with Cutout(stack[0], api_key=stack[1]) as client:
        yield client


def test_removes_the_background_of_a_file_path(cutout, fixture_png):
    result = cutout.remove_background(fixture_png)
    assert result.job["status"] == "succeeded"
    assert result.content_type == "image/png"
    assert png_header(result.content) == RGBA_512


def test_async_client_removes_a_background_from_bytes(stack, fixture_png):
    async def run():
        async with AsyncCutout(stack[0], api_key=stack[1]) as client:
            result = await client.remove_background(fixture_png.read_bytes(), {"output": "mask"})
            usage = await client.usage()
            return result, usage

    result, usage = asyncio.run(run())
    assert result.job["status"] == "succeeded"
    assert png_header(result.content)["width"] == 512
    assert usage["kind"] == "workspace"


def test_follows_a_jobs_events_and_resumes_after_last_event_id(cutout, fixture_png):
    upload = cutout.upload(fixture_png)
    job = cutout.create_removal(upload["id"])
    seen = []
    ended = cutout.wait_for_job(job["id"], on_event=seen.append)
    assert ended["status"] == "succeeded"
    replay = list(cutout.api.stream_job_events(job["id"]))
    assert replay and all(event.id for event in replay)
    assert replay[0].event == "image.job.created.v1" and replay[-1].event == "image.job.completed.v1"
    assert [e.id for e in seen] == [e.id for e in replay]
    resumed = list(cutout.api.stream_job_events(job["id"], last_event_id=replay[0].id))
    assert [e.id for e in resumed] == [e.id for e in replay[1:]]


def test_makes_an_idempotency_key_for_each_create_and_replays_a_given_one(stack, fixture_png):
    sent = []
    hooks = {"request": [lambda request: sent.append(request)]}
    with httpx.Client(event_hooks=hooks, timeout=60) as http, Cutout(stack[0], stack[1], http_client=http) as c:
        upload = c.upload(fixture_png)
        first, second = c.create_removal(upload["id"]), c.create_removal(upload["id"])
        key = str(uuid.uuid4())
        again = [c.create_removal(upload["id"], idempotency_key=key) for _ in range(2)]
        # Canceled at once: the test is about keys, not work for a busy inference server.
        canceled = [c.cancel_job(job["id"]) for job in (first, second, again[0])]
    keys = [r.headers.get("idempotency-key") for r in sent if r.url.path == "/v1/removals"]
    assert len(keys) == 4 and all(keys) and keys[0] != keys[1]
    assert first["id"] != second["id"]
    assert again[0]["id"] == again[1]["id"]
    assert {job["status"] for job in canceled} <= {"canceled", "succeeded", "failed"}


def test_a_bad_option_is_a_typed_problem(cutout):
    with pytest.raises(CutoutProblem) as caught:
        cutout.create_removal(source_url="https://images.example.com/a.jpg", options={"quality": "ultra"})  # type: ignore[typeddict-item]
    problem = caught.value
    assert (problem.status, problem.code, problem.retryable) == (400, "invalid_input", False)
    assert problem.field == "options.quality"
    assert problem.request_id and problem.detail


def test_a_wrong_key_is_invalid_api_key(stack):
    with Cutout(stack[0], api_key="sk_live_" + "0" * 40) as client, pytest.raises(CutoutProblem) as caught:
        client.list_jobs(limit=1)
    assert (caught.value.status, caught.value.code) == (401, "invalid_api_key")


def test_every_listing_answers(cutout):
    assert cutout.api.get_liveness()["status"] == "ok"
    assert isinstance(cutout.list_jobs(limit=2)["jobs"], list)
    assert cutout.list_api_keys()
    assert isinstance(cutout.api.list_webhooks()["endpoints"], list)


def test_tries_a_dress_on_a_person_in_one_call_sync_and_async(stack):
    root = Path(__file__).resolve().parents[3]
    person = root / "inference-server/test/fixtures/people/standing-field.jpg"
    garment = root / "docs/try-on/garment-dress.jpg"
    with Cutout(stack[0], api_key=stack[1]) as client:
        result = client.try_on(person, garment, {"category": "dress", "seed": 7})
    assert result.job["kind"] == "virtual_try_on"
    assert result.content_type == "image/png"
    assert png_header(result.content)["width"] == 427
    assert [w["code"] for w in result.job["warnings"]] == ["experimental_non_commercial", "partial_body"]

    async def run():
        async with AsyncCutout(stack[0], api_key=stack[1]) as client:
            return await client.try_on(person.read_bytes(), garment, {"category": "dress", "seed": 7})

    assert png_header(asyncio.run(run()).content)["height"] == 640


def test_a_try_on_without_a_person_raises_the_jobs_problem(cutout):
    root = Path(__file__).resolve().parents[3]
    with pytest.raises(CutoutProblem):
        cutout.try_on(root / "inference-server/test/fixtures/coffee.png", root / "docs/try-on/garment-dress.jpg", {"category": "dress"})


def test_catalog_image_options_are_the_contracts_parts_and_types():
    parts = typing.get_type_hints(SCHEMAS["CatalogImageMultipart"])
    del parts["references"]
    assert typing.get_type_hints(CatalogImageOptions) == parts


def test_makes_a_catalog_image_in_one_call_reads_it_back_and_finds_it_listed(cutout):
    coffee = Path(__file__).resolve().parents[3] / "inference-server/test/fixtures/coffee.png"
    fields: CatalogImageOptions = {"width": 384, "height": 256, "background": "#336699", "shadow": "none", "seed": 7}
    made = cutout.create_catalog_image([coffee], fields)
    assert (made.seed, made.content_type) == (7, "image/png")
    assert made.url == f"{cutout.base_url}/v1/catalog-images/{made.id}"
    assert (png_header(made.content)["width"], png_header(made.content)["height"]) == (384, 256)
    again = cutout.get_catalog_image(made.id)
    assert (again.id, again.seed, again.content) == (made.id, 7, made.content)
    listed = next(i for i in cutout.list_catalog_images(limit=100)["catalogImages"] if i["id"] == made.id)
    assert {**listed, "references": 1, "layout": "hero", **fields} == listed


def test_async_catalog_image_retried_under_its_key_is_the_first_image(stack):
    coffee = (Path(__file__).resolve().parents[3] / "inference-server/test/fixtures/coffee.png").read_bytes()
    key = str(uuid.uuid4())

    async def run():
        async with AsyncCutout(stack[0], api_key=stack[1]) as client:
            first = await client.create_catalog_image([coffee], {"width": 256, "height": 256}, idempotency_key=key)
            retried = await client.create_catalog_image([coffee], {"width": 256, "height": 256}, idempotency_key=key)
            return first, retried

    first, retried = asyncio.run(run())
    assert (retried.id, retried.seed, retried.content) == (first.id, first.seed, first.content)
    assert png_header(first.content)["width"] == 256


def test_a_catalog_reference_that_is_no_image_raises_the_problem_naming_it(cutout):
    coffee = Path(__file__).resolve().parents[3] / "inference-server/test/fixtures/coffee.png"
    with pytest.raises(CutoutProblem) as caught:
        cutout.create_catalog_image([coffee, b"not an image, only text" * 4])
    assert (caught.value.status, caught.value.code, caught.value.field) == (415, "unsupported_media", "references.1")
