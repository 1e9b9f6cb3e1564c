"""Content hashes that tie an override to the exact code it was written against."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def content_hash(text: str) -> str:
    """Hex sha256 of `text` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: stable across processes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
