"""The runner's own secrets: the values of its environment variables whose names look secret."""

from __future__ import annotations

import os

from ..authoring import SECRET_NAME

__all__ = ('runners_secrets',)

SHORTEST_SECRET = 8
"""Shorter values (`1`, `true`) would be found in any text by chance."""


def runners_secrets() -> tuple[str, ...]:
    """The values of this process's environment variables whose names look secret (match `SECRET_NAME`)."""
    return tuple(
        sorted(
            {value for name, value in os.environ.items() if SECRET_NAME.search(name) and len(value) >= SHORTEST_SECRET}
        )
    )
