"""The runner's canary: a secret-looking variable set in this process, and what of it a command's environment shows."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

from pydantic_ai.workspaces import Workspace

from ._support import lacking

__all__ = ('CANARY', 'environment_of', 'leaked', 'runners_canary')

CANARY = 'WORKSPACE_CONFORMANCE_CANARY_API_KEY'
"""The name of the secret-looking variable set in the runner's own environment while a hygiene rule runs."""


@contextlib.contextmanager
def runners_canary() -> Iterator[str]:
    """A secret-looking variable set in this process's `os.environ` for the block only, then restored."""
    value = f'sk-live-{uuid.uuid4().hex}'
    before = os.environ.get(CANARY)
    os.environ[CANARY] = value
    try:
        yield value
    finally:
        if before is None:
            os.environ.pop(CANARY, None)
        else:
            os.environ[CANARY] = before


async def environment_of(workspace: Workspace) -> dict[str, str]:
    """The variables a command sees, read with `env -0` (values may hold newlines); an environment skip without it."""
    result = await workspace.run(['env', '-0'])
    if result.exit_code == 127:
        lacking(('env',), '`env -0` exited 127', 'no `env` in the environment (`env -0` exited 127)')
    assert result.exit_code == 0, f'`env -0` exited {result.exit_code}: {result.stderr[:200]}'
    pairs = [item.partition('=') for item in result.stdout.split('\0') if item]
    return {name: value for name, _, value in pairs}


def leaked(seen: dict[str, str], secret: str) -> list[str]:
    """The variables of `seen` that carry the runner's canary, by name or by value."""
    return sorted(name for name, value in seen.items() if name == CANARY or secret in value)
