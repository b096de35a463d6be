"""A client for the Cutout image API: ``Cutout`` (sync) and ``AsyncCutout`` (asyncio), over httpx.

    from cutout import Cutout

    with Cutout("https://api.example", api_key="sk_live_…") as cutout:
        result = cutout.remove_background("photo.jpg")
        open("cutout.png", "wb").write(result.content)

Every operation of the API's /openapi.json is on ``cutout.api`` (generated, typed with the
document's schemas as TypedDicts); errors are raised as :class:`CutoutProblem`."""

from ._image import ImageInput, sniff_image_type
from ._operations import OPERATIONS, Api, AsyncApi
from ._schema import SCHEMAS, TERMINAL_STATUSES
from ._transport import Binary, Multipart, SseEvent, SseParser
from .client import (
    DEFAULT_OPTIONS,
    AsyncCutout,
    CatalogImageOptions,
    CatalogImageResult,
    Cutout,
    RemoveResult,
    is_terminal,
    job_problem,
)
from .problem import CutoutProblem, retry_after_seconds
from .retry import RetryOptions

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_OPTIONS",
    "OPERATIONS",
    "SCHEMAS",
    "TERMINAL_STATUSES",
    "Api",
    "AsyncApi",
    "AsyncCutout",
    "Binary",
    "CatalogImageOptions",
    "CatalogImageResult",
    "Cutout",
    "CutoutProblem",
    "ImageInput",
    "Multipart",
    "RemoveResult",
    "RetryOptions",
    "SseEvent",
    "SseParser",
    "is_terminal",
    "job_problem",
    "retry_after_seconds",
    "sniff_image_type",
]
