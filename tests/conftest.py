"""Shared fixtures: the project root and the committed manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def manifest() -> dict[str, Any]:
    """The committed manifest/manifest.json, parsed."""
    return json.loads((ROOT / "manifest" / "manifest.json").read_text("utf-8"))
