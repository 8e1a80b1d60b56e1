"""Looking at a path the user named before using it: one line for a missing or unreadable one.

Shared by the options that name a file or folder (``--root``, ``--tls-cert``, ``--tls-key``...), so that
each says "no such ..." or "cannot read: ..." the same way instead of an errno or a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from generator.base.errors import shown_path, unreadable_text


def path_mode(path: Path, fail: Callable[[str], Exception], missing: str = "no such file or folder") -> int:
    """``st_mode`` of ``path`` (symlinks followed); a missing or unreadable path raises ``fail(reason)``."""
    try:
        return path.stat().st_mode
    except FileNotFoundError:
        raise fail(missing) from None
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror or type(exc).__name__}") from None


def regular_entry(path: Path) -> bool:
    """``path`` is a regular file itself, its link not followed: an entry of a folder a command reads that is
    a symbolic link, a FIFO or a device is never taken for the file it names (it is named as an error)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def inside_checkout(root: Path, relative: Path | str, fail: Callable[[str], Exception]) -> Path:
    """``root / relative``, looked at part by part below ``root`` without following links: a part that is a
    symbolic link (a write through it would land anywhere) or a path resolving outside ``root`` raises
    ``fail(message)``; a part that cannot be looked at is named as such (``permission denied``, ``a symbolic
    link loop``), never taken for absent. Parts that do not exist yet are fine (a folder still to create)."""
    path = root
    for part in Path(relative).parts:
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            break
        except OSError as exc:
            raise fail(unreadable_text(path, exc)) from None
        if stat.S_ISLNK(mode):
            try:
                os.stat(path)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise fail(unreadable_text(path, exc)) from None
            raise fail(f"{shown_path(path)}: a symbolic link (to {shown_path(os.readlink(path))}), not a folder "
                       "or file of the checkout: a freeze is read and written inside the checkout only") from None
    target = root / relative
    if not target.resolve().is_relative_to(root.resolve()):
        raise fail(f"{shown_path(target)}: resolves to {shown_path(target.resolve())}, outside the checkout "
                   f"{shown_path(root.resolve())}")
    return target
