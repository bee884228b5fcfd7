"""Directories of many empty entries for the listing rules: one POSIX shell command where there is one, else writes."""

from __future__ import annotations

import anyio
from pydantic_ai.workspaces import SupportsCommands, WorkspaceBackend

from ..authoring import commands_of, current_platform, paths, workspace_of

__all__ = ('entry_names', 'make_entries')

_MAKE = (
    'mkdir -p -- "$1" && cd -- "$1" || exit 1; i=0; '
    'while [ "$i" -lt "$2" ]; do : > "entry-$i" || exit 1; i=$((i + 1)); done'
)
"""Make `$2` empty files `entry-0`, `entry-1`, ... in `$1`, creating it."""


def entry_names(count: int) -> set[str]:
    """The names `make_entries` gives `count` entries."""
    return {f'entry-{index}' for index in range(count)}


async def make_entries(backend: WorkspaceBackend, directory: str, count: int, has_real_posix_shell: bool) -> None:
    """Fill `directory` (made if missing) with `count` empty files: one `sh` command, else 32 writes at a time."""
    if isinstance(backend, SupportsCommands) and has_real_posix_shell and current_platform() == 'posix':
        made = await commands_of(backend).run(['sh', '-c', _MAKE, 'sh', directory, str(count)])
        assert made.exit_code == 0, f'creating {count} entries with `sh` failed (exit {made.exit_code}): {made.stderr}'
        return
    workspace = workspace_of(backend)
    await workspace.make_dir(directory)
    limiter = anyio.CapacityLimiter(32)

    async def create(name: str) -> None:
        async with limiter:
            await workspace.write_bytes(paths.join(directory, name), b'')

    async with anyio.create_task_group() as group:
        for name in entry_names(count):
            group.start_soon(create, name)
