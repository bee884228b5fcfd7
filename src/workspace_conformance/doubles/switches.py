"""`memory_backend(...)`: an in-memory double with capabilities turned off one at a time."""

from __future__ import annotations

import functools
from typing import Any

from .commands import CommandsMethod, ScriptedCommands
from .memory import FilesystemMethods, MemoryCore, RealpathMethod, SymlinkMethod

__all__ = ('memory_backend',)


@functools.cache
def _composed(commands: bool, filesystem: bool, realpath: bool, symlinks: bool) -> type[MemoryCore]:
    bases: list[type[MemoryCore]] = []
    if commands:
        bases.append(CommandsMethod)
    if filesystem:
        bases.append(FilesystemMethods)
    if realpath:
        bases.append(RealpathMethod)
    if symlinks:
        bases.append(SymlinkMethod)
    name = 'MemoryBackend' + ''.join(
        f'[{label}]'
        for label, on in (
            ('commands', commands),
            ('filesystem', filesystem),
            ('realpath', realpath),
            ('symlinks', symlinks),
        )
        if on
    )
    return type(name, (*bases, MemoryCore) if bases else (MemoryCore,), {})


def memory_backend(
    *,
    commands: ScriptedCommands | None = None,
    filesystem: bool = True,
    realpath: bool = True,
    symlinks: bool = True,
    **options: Any,
) -> Any:
    """An in-memory backend with exactly the protocols asked for (conformance is structural: absent is absent).

    `commands` adds `SupportsCommands` answered by that table; `filesystem=False` drops `SupportsFilesystem`,
    `realpath=False` drops `SupportsRealpath`, `symlinks=False` drops `make_symlink`. `options` go to the
    constructor (`working_dir`, `files`, `uid`, `lazy`).
    """
    backend: Any = _composed(commands is not None, filesystem, realpath, symlinks)(**options)
    if commands is not None:
        backend.commands = commands
    return backend
