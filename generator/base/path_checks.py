"""Looking at a path the user named before using it: one line for a missing or unreadable one.

Shared by the options that name a file or folder (``--root``, ``--tls-cert``, ``--tls-key``...), so that
each says "no such ..." or "cannot read: ..." the same way instead of an errno or a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def path_mode(path: Path, fail: Callable[[str], Exception], missing: str = "no such file or folder") -> int:
    """``st_mode`` of ``path`` (symlinks followed); a missing or unreadable path raises ``fail(reason)``."""
    try:
        return path.stat().st_mode
    except FileNotFoundError:
        raise fail(missing) from None
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror or type(exc).__name__}") from None
