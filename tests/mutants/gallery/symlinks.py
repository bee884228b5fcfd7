"""Mutants of the symlink rules: links followed, replaced or resolved the wrong way."""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import posixpath
import shutil
import stat as stat_module
import tempfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
from pydantic_ai.workspaces import FileEntry, LocalWorkspaceBackend

from workspace_conformance.doubles import InMemoryBackend
from workspace_conformance.doubles.memory import FilesystemMethods, SymlinkMethod

from ..registry import breaks, breaks_in_memory
from ._shared import _blocking, _refuse_outside


@breaks(
    kills=['realpath_and_entries_follow_symlinks'],
    bug='stat() uses lstat, so a symlink to a directory is reported as a non-directory.',
)
class StatDoesNotFollowLinks(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        info = await _blocking(os.lstat, path)
        is_dir = stat_module.S_ISDIR(info.st_mode)
        return FileEntry(name=posixpath.basename(path), path=path, is_dir=is_dir, size=None if is_dir else info.st_size)


@breaks(
    kills=['symlink_loop_does_not_break_listing'],
    bug='list_dir stats every entry and lets the ELOOP of a symlink loop fail the whole listing.',
)
class ListingStatsEveryEntry(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        def list_entries() -> list[FileEntry]:
            entries = []
            for name in sorted(os.listdir(path)):
                child = posixpath.join(path, name)
                info = os.stat(child)  # ELOOP on a symlink loop, and nothing catches it
                is_dir = stat_module.S_ISDIR(info.st_mode)
                entries.append(FileEntry(name=name, path=child, is_dir=is_dir, size=None if is_dir else info.st_size))
            return entries

        return await _blocking(list_entries)


@breaks(
    kills=[
        'realpath_and_entries_follow_symlinks',
        'a_link_never_raises_the_authority_of_what_it_reaches',
        'lowest_authority_under_counts_entries_where_they_lead',
    ],
    bug='realpath only normalizes the path as text (posixpath.normpath) and follows no symlinks.',
)
class RealpathIsNormpath(LocalWorkspaceBackend):
    async def realpath(self, path: str) -> str:
        return posixpath.normpath(path)


@breaks(
    kills=['writes_go_through_a_symlink'],
    bug='write_bytes writes a temporary file and renames it onto the path, replacing a symlink with a regular file.',
)
class AtomicWriteReplacesLinks(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix='.atomic-', dir=parent)
            with os.fdopen(fd, 'wb') as file:
                file.write(data)
            os.replace(temporary, path)  # renames over the link itself, not its target

        await _blocking(write)


@breaks(
    kills=['native_realpath_keeps_the_working_dir_and_missing_names'],
    bug='realpath resolves with strict=True (like `readlink -e`), so a path with missing names raises.',
)
class StrictRealpath(LocalWorkspaceBackend):
    async def realpath(self, path: str) -> str:
        return await _blocking(functools.partial(os.path.realpath, path, strict=True))


@breaks(
    kills=['removing_a_symlink_removes_the_link_not_its_target'],
    bug='remove() resolves the path first (like `rm -rf link/`), deleting the target of a link and keeping the link.',
)
class RemoveFollowsLinks(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        root = await self.working_dir()

        def remove() -> None:
            target = os.path.realpath(path)  # the bug: the link is resolved before deleting
            _refuse_outside(target, root)
            if os.path.isdir(target):
                shutil.rmtree(target)
            else:
                os.unlink(target)

        await _blocking(remove)


@breaks_in_memory(
    kills=['removing_a_symlink_removes_the_link_not_its_target'],
    bug='A filesystem-only backend resolves the path before deleting, so removing a link deletes its target.',
)
class MemoryRemoveFollowsLinks(InMemoryBackend):
    async def remove(self, path: str) -> None:
        await super().remove(self.tree.realpath(path))


@breaks(
    kills=['removing_a_tree_does_not_follow_links_out_of_it'],
    bug='remove() walks the tree by hand with Path.is_dir(), which follows links, and empties directories they reach.',
)
class RecursiveRemoveFollowsLinks(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        root = await self.working_dir()

        def delete(target: Path) -> None:
            _refuse_outside(target, root)
            if target.is_dir():  # the bug: `is_dir` follows a symlink, so the walk descends through links
                for child in target.iterdir():
                    delete(child)
                if target.is_symlink():
                    target.unlink()
                else:
                    target.rmdir()
            else:
                target.unlink()

        if not await _blocking(os.path.lexists, path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        await _blocking(delete, Path(path))


@breaks(
    kills=['make_dir_over_a_symlink_to_a_directory_succeeds'],
    bug='make_dir checks the existing entry with lstat, so a symlink to a directory is refused as a file in the way.',
)
class MakeDirChecksWithLstat(LocalWorkspaceBackend):
    async def make_dir(self, path: str) -> None:
        def check() -> None:
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                return
            if not stat_module.S_ISDIR(mode):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)

        await _blocking(check)
        await super().make_dir(path)


@breaks(
    kills=['stat_follows_a_symlink_to_a_file'],
    bug="stat takes the size from lstat, so a symlink to a file reports the length of the link's target path.",
)
class StatSizeFromLstat(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        entry = await super().stat(path)
        if entry.is_dir:
            return entry
        return dataclasses.replace(entry, size=(await _blocking(os.lstat, path)).st_size)


def _parts(path: str) -> list[str]:
    return [part for part in path.split('/') if part and part != '.']


class HandRolledRealpath(LocalWorkspaceBackend):
    """`realpath` written by hand, component by component like a shell `readlink` loop; each flag breaks one clause."""

    follow_dangling = True
    follow_chains = True
    absolute_restarts = True
    dotdot_from_target = True
    relative_from_link_dir = True
    hop_limit: int | None = 40
    normalize = True

    async def realpath(self, path: str) -> str:
        root = await self.working_dir()
        parts = deque(_parts(path if self.dotdot_from_target else posixpath.normpath(path)))
        real: list[str] = []
        hops = 0
        while parts:
            part = parts.popleft()
            if part == '..':
                if real:
                    real.pop()
                continue
            candidate = '/' + '/'.join([*real, part])
            followed = self.hop_limit is None or hops < self.hop_limit
            if followed and os.path.islink(candidate) and (self.follow_dangling or os.path.exists(candidate)):
                hops += 1
                await anyio.lowlevel.checkpoint()
                target = os.readlink(candidate)
                if not self.follow_chains:
                    real = _parts(posixpath.normpath(posixpath.join('/' + '/'.join(real), target)))
                    continue
                if target.startswith('/'):
                    if self.absolute_restarts:
                        real = []
                elif not self.relative_from_link_dir:
                    real = _parts(root)
                parts.extendleft(reversed(_parts(target)))
                continue
            real.append(part)
        if not self.normalize and hops == 0:
            return path
        return '/' + '/'.join(real)


@breaks(
    kills=['realpath_keeps_the_missing_target_of_a_dangling_link'],
    bug='realpath follows a link only when `test -e` says its target exists, so a dangling link is kept as the link.',
)
class RealpathSkipsDanglingLinks(HandRolledRealpath):
    follow_dangling = False


@breaks(
    kills=['realpath_resolves_a_chain_of_links'],
    bug='realpath replaces a link with its `readlink` target once and never looks at links inside that target.',
)
class RealpathFollowsOneHop(HandRolledRealpath):
    follow_chains = False


@breaks(
    kills=['realpath_follows_an_absolute_target'],
    bug="realpath appends every link target to the link's directory, so an absolute target lands below it.",
)
class RealpathJoinsAbsoluteTargets(HandRolledRealpath):
    absolute_restarts = False


@breaks(
    kills=['realpath_climbs_dotdot_from_the_link_target'],
    bug='realpath normalizes the path as text before following links, so `link/..` climbs from the link itself.',
)
class RealpathCollapsesDotdotFirst(HandRolledRealpath):
    dotdot_from_target = False


@breaks(
    kills=['realpath_resolves_relative_names_from_the_right_directory'],
    bug="realpath resolves relative link targets from the working directory (the remote shell's cwd), not the link's.",
)
class RealpathFromTheWorkingDir(HandRolledRealpath):
    relative_from_link_dir = False


@breaks(
    kills=['realpath_returns_an_absolute_normalized_path'],
    bug='realpath returns the path exactly as given when no component is a link, slashes and dots included.',
)
class RealpathKeepsTheSpelling(HandRolledRealpath):
    normalize = False


@breaks(
    kills=['realpath_through_a_link_loop_is_bounded'],
    bug='realpath follows links without counting them, so a link loop keeps it resolving forever.',
)
class RealpathSpinsOnLoops(HandRolledRealpath):
    hop_limit = None


@breaks_in_memory(
    kills=['a_files_only_backend_that_holds_symlinks_resolves_them_natively'],
    bug='A files-only backend over storage with symlinks leaves out realpath, so path checks see only the text.',
)
class HoldsSymlinksWithoutRealpath(FilesystemMethods, SymlinkMethod):
    """The in-memory double without `RealpathMethod`: links are made and followed, never resolved natively."""
