"""Image inputs the client accepts (a path or bytes) and the media type of bytes that came without
one, from their signature, so an upload names the right type (the API checks the bytes again)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

#: A file path or the image's bytes.
ImageInput = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

#: The media types POST /v1/uploads accepts; any other is replaced by the sniffed type.
UPLOAD_TYPES = frozenset(
    {
        "application/octet-stream",
        "image/jpeg",
        "image/png",
        "image/webp",
        "image/avif",
        "image/heic",
        "image/heif",
    }
)


def read_image(source: ImageInput) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    return Path(source).read_bytes()


def sniff_image_type(data: bytes) -> str:
    """The image media type by signature, or ``application/octet-stream`` (the API sniffs it)."""
    head = data[:16]
    if head.startswith(b"\x89PNG"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"avif", b"avis"):
            return "image/avif"
        if brand in (b"heic", b"heix", b"hevc", b"heim", b"heis"):
            return "image/heic"
        if brand in (b"mif1", b"msf1"):
            return "image/heif"
    return "application/octet-stream"
