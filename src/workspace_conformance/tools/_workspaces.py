"""The workspaces the tool suite runs tools in, and what each holds before the calls: seeded files, a huge file."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace

from ..authoring import machinery_hidden, owning
from ..doubles import CommandsOnly, FilesOnly, memory_backend
from ._fit import note_use

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'HUGE_LINES',
    'Seeds',
    'ToolWorkspace',
    'default_workspaces',
    'files_only_with_symlinks',
    'huge_text',
    'seed_host',
    'seed_workspace',
)


@dataclass(frozen=True)
class ToolWorkspace:
    """A workspace the tools are run in: its name, how to build it on a host directory, and what it is.

    `local`: its storage is the host directory itself, so a tool may touch it directly; `symlinks`: a symlink made
    there with `os.symlink` is one the workspace holds; `commands`: it runs commands. `build` gets a new empty
    directory (the workspace's root, for the host-backed ones) and returns the `Workspace`.
    """

    name: str
    build: Callable[[Path], Workspace]
    local: bool = False
    symlinks: bool = False
    commands: bool = False
    host_backed: bool = True


def _owned(kind: type[LocalWorkspaceBackend]) -> type[LocalWorkspaceBackend]:
    """`kind` with every protocol method's host I/O marked as the workspace's own (never a finding)."""

    def wrap(name: str) -> Any:
        original = getattr(kind, name)

        async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            note_use(name)
            with owning():
                return await original(self, *args, **kwargs)

        method.__name__ = name
        return method

    names = [
        name
        for name in dir(kind)
        if not name.startswith('_') and inspect.iscoroutinefunction(inspect.getattr_static(kind, name, None))
    ]
    return type(f'Owned{kind.__name__}', (kind,), {name: wrap(name) for name in names})


_OwnedLocal = _owned(LocalWorkspaceBackend)


def default_workspaces() -> tuple[ToolWorkspace, ...]:
    """The four default workspaces: local, commands-only (shell-derived files), files-only (no realpath), memory.

    The files-only one is not checked with symlinks: pydantic-ai asks a files-only backend whose storage holds
    symlinks to implement `SupportsRealpath`, so no tool can tell where such a link leads (docs/findings.md, F1,
    checks it with `files_only_with_symlinks()`).
    """
    return (
        ToolWorkspace('local', lambda root: Workspace(_OwnedLocal(root)), local=True, symlinks=True, commands=True),
        ToolWorkspace(
            'commands-only', lambda root: Workspace(CommandsOnly(_OwnedLocal(root))), symlinks=True, commands=True
        ),
        ToolWorkspace('files-only', lambda root: Workspace(FilesOnly(_OwnedLocal(root)))),
        ToolWorkspace('memory', lambda root: Workspace(memory_backend()), host_backed=False),
    )


def files_only_with_symlinks() -> ToolWorkspace:
    """A files-only workspace over host disk whose symlinks are checked: where a missing `realpath` meets them."""
    return ToolWorkspace('files-only+symlinks', lambda root: Workspace(FilesOnly(_OwnedLocal(root))), symlinks=True)


@dataclass(frozen=True)
class Seeds:
    """What every workspace holds before its calls: a file with the marker once, a directory, in a token's names."""

    token: str

    @property
    def marker(self) -> str:
        return f'marker-{self.token}'

    @property
    def file(self) -> str:
        return f'notes-{self.token}.txt'

    @property
    def directory(self) -> str:
        return f'dir-{self.token}'

    @property
    def new_file(self) -> str:
        return f'new-{self.token}.txt'

    @property
    def content(self) -> str:
        return f'first line\n{self.marker}\nlast line\n'


def seed_host(root: Path, seeds: Seeds, outside: Path, symlinks: bool) -> None:
    (root / seeds.directory).mkdir(parents=True, exist_ok=True)
    (root / seeds.file).write_text(seeds.content)
    (root / seeds.directory / 'inner.txt').write_text(seeds.content)
    if symlinks:
        os.symlink(outside / 'secret.txt', root / f'link-{seeds.token}.txt')
        os.symlink(outside, root / f'dirlink-{seeds.token}')


async def seed_workspace(workspace: Workspace, seeds: Seeds) -> None:
    await workspace.make_dir(seeds.directory)
    await workspace.write_text(seeds.file, seeds.content)
    await workspace.write_text(f'{seeds.directory}/inner.txt', seeds.content)


HUGE_LINES = 20_000


def huge_text() -> str:
    """About 1 MB: 20 000 numbered lines, each with its own token `L<number>;`."""
    return ''.join(f'L{n:06d}; {"x" * 40}\n' for n in range(HUGE_LINES))
