"""An HTTP answer's body read bounded: what a command fetches from a server it does not control.

Read through ``iter_content``, since requests wraps urllib3's read errors (a body cut short, a read timeout, a
bad encoding) as ``RequestException``, which ``raw.read`` does not; a body larger than asked is cut (the
caller asks for one byte more than it accepts, to tell "too large"); ``seconds`` bounds the whole read,
however slowly the server drips it (the timeout of requests bounds each socket read only).
"""

from __future__ import annotations

import time

import requests

CHUNK = 16 * 1024


def first_bytes(answer: requests.Response, limit: int, *, seconds: float | None = None) -> bytes:
    """At most ``limit`` bytes of the body; ``TimeoutError`` when reading it takes more than ``seconds``."""
    deadline = None if seconds is None else time.monotonic() + seconds
    body = bytearray()
    for chunk in answer.iter_content(CHUNK):
        body += chunk
        if len(body) >= limit:
            break
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"the answer took more than {seconds:g} s to read")
    return bytes(body[:limit])
