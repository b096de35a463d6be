"""The stack under test: ``CUTOUT_BASE_URL`` and ``CUTOUT_API_KEY`` (test/clients/python.test.ts
passes those of the e2e stage's local stack, ``npm start`` with the real model). Tests that
need it are skipped without them; that runner fails on any skip."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The package from this checkout, not an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FIXTURE = Path(__file__).resolve().parents[3] / "test" / "fixtures" / "astronaut.png"


@pytest.fixture(scope="session")
def stack() -> tuple[str, str]:
    base_url, api_key = os.environ.get("CUTOUT_BASE_URL"), os.environ.get("CUTOUT_API_KEY")
    if not base_url or not api_key:
        pytest.skip("no stack: set CUTOUT_BASE_URL and CUTOUT_API_KEY (npm test's e2e stage does)")
    return base_url, api_key


@pytest.fixture(scope="session")
def fixture_png() -> Path:
    return FIXTURE


def png_header(data: bytes) -> dict[str, object]:
    """Signature, width, height and colour type from a PNG's IHDR chunk."""
    return {
        "signature": data[:8].hex(),
        "width": int.from_bytes(data[16:20], "big"),
        "height": int.from_bytes(data[20:24], "big"),
        "colour_type": data[25],
    }
