"""What a tool call did outside its workspace: the decoy host it runs under, and tree digests that show a change."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic_ai.workspaces import Workspace

from ..authoring import machinery_hidden, owning
from ._workspaces import Seeds

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('decoy_host', 'host_tree', 'memory_tree', 'tree_diff')


def host_tree(root: Path) -> dict[str, str]:
    """Each entry under `root` (not following symlinks): its kind, size and a digest of its bytes.

    An entry that goes between the listing and the look is left out: a command the tool started may still be writing
    in the workspace (the harness's Shell renames a background job's `status.tmp` as it ends), and the snapshot must
    not raise in the tool's place.
    """
    found: dict[str, str] = {}
    with owning():
        for directory, names, files in os.walk(root):
            for name in [*names, *files]:
                path = Path(directory) / name
                try:
                    found[str(path.relative_to(root))] = _entry(path)
                except FileNotFoundError:
                    continue
    return found


def _entry(path: Path) -> str:
    if path.is_symlink():
        return f'link:{os.readlink(path)}'
    if path.is_dir():
        return 'dir'
    data = path.read_bytes()
    return f'file:{len(data)}:{hash(data)}'


async def memory_tree(workspace: Workspace) -> dict[str, str]:
    found: dict[str, str] = {}
    pending = [await workspace.working_dir()]
    while pending:
        directory = pending.pop()
        for entry in await workspace.list_dir(directory):
            if entry.is_dir:
                found[entry.path] = 'dir'
                pending.append(entry.path)
            else:
                try:
                    data = await workspace.read_bytes(entry.path)
                except OSError:  # a dangling symlink
                    found[entry.path] = 'unreadable'
                else:
                    found[entry.path] = f'file:{len(data)}:{hash(data)}'
    return found


def tree_diff(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(sorted(name for name in {*before, *after} if before.get(name) != after.get(name)))


@contextlib.contextmanager
def decoy_host(base: Path, seeds: Seeds) -> Iterator[tuple[str, ...]]:
    """A sacrificial cwd, HOME, XDG homes and temp dir, each holding files of the workspace's names with decoy text."""
    import tempfile

    cwd, home, tmp = base / 'host-cwd', base / 'host-home', base / 'host-tmp'
    for directory in (cwd, home, tmp):
        (directory / seeds.directory).mkdir(parents=True, exist_ok=True)
        (directory / seeds.file).write_text(f'decoy {seeds.token}\n')
        for hidden in ('.agents', '.claude', '.config'):
            (directory / hidden).mkdir(exist_ok=True)
    saved_env = {name: os.environ.get(name) for name in ('HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME')}
    saved_cwd, saved_tmp = os.getcwd(), tempfile.tempdir
    os.environ['HOME'] = str(home)
    for name in ('XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME'):
        os.environ[name] = str(home / '.config')
    tempfile.tempdir = str(tmp)
    os.chdir(cwd)
    try:
        yield tuple(str(path.resolve()) for path in (cwd, home, tmp))
    finally:
        os.chdir(saved_cwd)
        tempfile.tempdir = saved_tmp
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
