"""The runner's own secrets: the values of its environment variables whose names look secret."""

from __future__ import annotations

import os
import re

__all__ = ('SECRET_NAME', 'runners_secrets')

SECRET_NAME = re.compile(r'TOKEN|SECRET|KEY|PASSW|CREDENTIAL', re.IGNORECASE)
"""Names of the runner's environment variables whose values the `secrets` fixture holds by default."""


SHORTEST_SECRET = 8
"""Shorter values (`1`, `true`) would be found in any text by chance."""


def runners_secrets() -> tuple[str, ...]:
    """The values of this process's environment variables whose names look secret (TOKEN, SECRET, KEY, ...)."""
    return tuple(
        sorted(
            {value for name, value in os.environ.items() if SECRET_NAME.search(name) and len(value) >= SHORTEST_SECRET}
        )
    )
