"""``corpus publish``: the season's opening kit and close publication; ``corpus verify-publication``."""

from __future__ import annotations

from generator.cli.options import Subparsers


def register(sub: Subparsers) -> None:
    del sub
