"""Mutants for the files, symlinks and lifecycle rules added in 0.2.0: one clause broken the way real backends break it.

Every mutant works only inside the run directory it is given. The ones that delete (a remove that follows links,
a write that mirrors a staging directory, a remove that prunes parents) check that each path they touch is strictly
below the working directory first, so even their bugs can destroy nothing but a rule's scratch data.
"""

from __future__ import annotations

import base64
import dataclasses
import errno
import functools
import os
import posixpath
import shutil
import stat as stat_module
import threading
import unicodedata
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread
from pydantic_ai.workspaces import FileEntry, LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

from workspace_conformance.doubles import InMemoryBackend, memory_symlink
from workspace_conformance.targets.local import LAZY_PROVIDER, LazyLocalBackend

from .registry import in_memory, mutant, on_shared_dir, shared_dir

T = TypeVar('T')


async def _blocking(function: Callable[..., T], *args: object) -> T:
    """`function(*args)` in a worker thread: file system calls block."""
    return await anyio.to_thread.run_sync(functools.partial(function, *args))


def _below(path: str | Path, root: str | Path) -> bool:
    """Whether `path` (resolved) is strictly below `root` (resolved): the only places a destructive mutant touches."""
    resolved, jail = Path(path).resolve(), Path(root).resolve()
    return resolved != jail and resolved.is_relative_to(jail)


def _refuse_outside(path: str | Path, root: str | Path) -> None:
    if not _below(path, root):
        # Not the modelled bug: the guard that keeps a destructive mutant inside its working directory.
        raise ValueError(f'mutant refuses to touch {path}, which is not below its working directory {root}')


# --- files: contents --------------------------------------------------------------------------------------------


class SkipsEmptyWrites(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        if data:
            await super().write_bytes(path, data)


mutant(
    name='skips_empty_writes',
    kills=['empty_file_round_trip', 'zero_byte_write_creates_the_file'],
    bug='write_bytes returns early on empty data (the upload API rejects empty bodies): no file, no truncation.',
    backend=on_shared_dir(SkipsEmptyWrites),
)


def _as_folder_marker(entry: FileEntry) -> FileEntry:
    if not entry.is_dir and entry.size == 0:
        return dataclasses.replace(entry, is_dir=True, size=None)
    return entry


class ZeroByteFilesAreFolderMarkers(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        return _as_folder_marker(await super().stat(path))

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [_as_folder_marker(entry) for entry in await super().list_dir(path)]


mutant(
    name='zero_byte_files_are_folder_markers',
    kills=['zero_byte_write_creates_the_file'],
    bug="An object-store backend takes every zero-byte object for a 'folder/' marker and reports it as a directory.",
    backend=on_shared_dir(ZeroByteFilesAreFolderMarkers),
)


class RewritesInPlace(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> bool:
            try:
                file = open(path, 'r+b')  # noqa: SIM115  (the bug: no truncation)
            except FileNotFoundError:
                return False
            with file:
                file.write(data)
            return True

        if not await _blocking(write):
            await super().write_bytes(path, data)


mutant(
    name='rewrites_in_place',
    kills=['shorter_overwrite_truncates'],
    bug="write_bytes opens an existing file with 'r+b' and writes over its start, so a shorter rewrite keeps the tail.",
    backend=on_shared_dir(RewritesInPlace),
)


class TranslatesNewlines(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(path, data.replace(b'\r\n', b'\n').replace(b'\r', b'\n'))


mutant(
    name='translates_newlines',
    kills=['line_endings_and_nul_bytes_are_preserved'],
    bug='Uploads go through a text-mode channel with universal newlines, turning CRLF and lone CR into LF.',
    backend=on_shared_dir(TranslatesNewlines),
)


class StopsAtNul(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path)).split(b'\x00', 1)[0]


mutant(
    name='stops_at_nul',
    kills=['line_endings_and_nul_bytes_are_preserved'],
    bug='The sandbox agent returns file contents as a C string, so a read ends at the first NUL byte.',
    backend=on_shared_dir(StopsAtNul),
)


class ReadsThroughATextChannel(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path)).decode('utf-8', errors='replace').encode()


mutant(
    name='reads_through_a_text_channel',
    kills=['invalid_utf8_bytes_are_preserved'],
    bug='read_bytes gets the contents as a JSON string field, so bytes that are not UTF-8 come back as U+FFFD.',
    backend=on_shared_dir(ReadsThroughATextChannel),
)


class ReadsIntoABytearray(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        chunks = bytearray()
        chunks.extend(await super().read_bytes(path))
        return chunks  # type: ignore[return-value]  # the bug


mutant(
    name='reads_into_a_bytearray',
    kills=['read_bytes_returns_bytes'],
    bug='read_bytes assembles paged chunks in a bytearray and returns that buffer instead of bytes.',
    backend=on_shared_dir(ReadsIntoABytearray),
)


# --- files: metadata and listings -------------------------------------------------------------------------------


class StatSizeIsAFloat(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        entry = await super().stat(path)
        size = None if entry.size is None else float(entry.size)
        return dataclasses.replace(entry, size=size)  # type: ignore[arg-type]  # the bug


mutant(
    name='stat_size_is_a_float',
    kills=['stat_returns_a_file_entry_with_exact_types'],
    bug="stat passes the provider's JSON number through unconverted, so every size arrives as a float.",
    backend=on_shared_dir(StatSizeIsAFloat),
)


class ListsLazily(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)

        def pages() -> Iterator[FileEntry]:
            yield from entries

        return pages()  # type: ignore[return-value]  # the bug


mutant(
    name='lists_lazily',
    kills=['list_dir_returns_entries_under_the_directory'],
    bug="list_dir returns a generator over the provider's pages instead of a sequence, so it can be walked only once.",
    backend=on_shared_dir(ListsLazily),
)


class SizesInBlocks(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = []
        for entry in await super().list_dir(path):
            if not entry.is_dir:
                info = await _blocking(os.stat, entry.path)
                entry = dataclasses.replace(entry, size=info.st_blocks * 512)
            entries.append(entry)
        return entries


mutant(
    name='sizes_in_blocks',
    kills=['list_dir_returns_entries_under_the_directory'],
    bug='list_dir reports the disk space each file uses (st_blocks * 512, as `du` does), not its length in bytes.',
    backend=on_shared_dir(SizesInBlocks),
)


class ListsLineByLine(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        names = '\n'.join(sorted(await _blocking(os.listdir, path))).split('\n')  # what parsing `ls -1` gives
        entries = []
        for name in names:
            child = posixpath.join(path, name)
            try:
                is_dir = await _blocking(os.path.isdir, child)
            except OSError:
                is_dir = False
            entries.append(FileEntry(name=name, path=child, is_dir=is_dir, size=None))
        return entries


mutant(
    name='lists_line_by_line',
    kills=['names_with_control_characters_round_trip'],
    bug='list_dir parses the output of `ls -1` line by line, so a name holding a newline splits into two entries.',
    backend=on_shared_dir(ListsLineByLine),
)


class HidesDotfiles(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [entry for entry in await super().list_dir(path) if not entry.name.startswith('.')]


mutant(
    name='hides_dotfiles',
    kills=['dotfiles_are_listed'],
    bug='list_dir runs `ls` without `-A`, so names starting with a dot never appear.',
    backend=on_shared_dir(HidesDotfiles),
)


class InterpolatesPathsIntoDoubleQuotes(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        encoded = base64.b64encode(data).decode()
        # The bug: the path is pasted between double quotes, where `$`, backquotes, `"` and `\` are still live.
        script = f'mkdir -p "$(dirname "{path}")" && printf %s {encoded} | base64 -d > "{path}"'
        result = await self.run(script, shell=True)
        if result.exit_code != 0:
            raise OSError(f'write failed: {result.stderr.strip()}')


mutant(
    name='interpolates_paths_into_double_quotes',
    kills=['names_with_shell_metacharacters_round_trip'],
    bug='write_bytes builds its shell command with the path in double quotes, so `$`, backquotes and `"` are expanded.',
    backend=on_shared_dir(InterpolatesPathsIntoDoubleQuotes),
)


def _nfc(path: str) -> str:
    return unicodedata.normalize('NFC', path)


class NormalizesNamesToNfc(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(_nfc(path), data)

    async def read_bytes(self, path: str) -> bytes:
        return await super().read_bytes(_nfc(path))

    async def stat(self, path: str) -> FileEntry:
        return dataclasses.replace(await super().stat(_nfc(path)), name=posixpath.basename(path), path=path)


mutant(
    name='file_api_normalizes_names_to_nfc',
    kills=['unicode_names_are_kept_exactly'],
    bug="Paths are NFC-normalized on the way to the provider's API, so NFC and NFD spellings become one file.",
    backend=on_shared_dir(NormalizesNamesToNfc),
)


class MemoryNormalizesNamesToNfc(InMemoryBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(_nfc(path), data)


mutant(
    name='memory_normalizes_names_to_nfc',
    kills=['unicode_names_are_kept_exactly'],
    bug='A filesystem-only backend on a normalizing store (HFS+-like) writes every name in NFC.',
    backend=in_memory(MemoryNormalizesNamesToNfc),
    make_symlink=memory_symlink,
)


class ExistsCatchesOnlyFileNotFound(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        try:
            await _blocking(os.stat, path)
        except FileNotFoundError:
            return False
        return True


mutant(
    name='exists_catches_only_file_not_found',
    kills=['exists_below_a_regular_file_is_false'],
    bug='exists() is `os.stat` catching only FileNotFoundError, so a path below a regular file raises ENOTDIR.',
    backend=on_shared_dir(ExistsCatchesOnlyFileNotFound),
)


class ExistsOnlyStrictlyInside(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        root = await self.working_dir()
        if not path.startswith(root + '/'):  # the bug: an off-by-one sandbox check that excludes the root itself
            return False
        return await super().exists(path)


mutant(
    name='exists_only_strictly_inside',
    kills=['exists_of_the_working_dir_is_true'],
    bug="exists() answers only for paths that start with '<working dir>/', so the working directory itself is False.",
    backend=on_shared_dir(ExistsOnlyStrictlyInside),
)


class StagesThroughOneTemporaryName(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        staging = posixpath.join(posixpath.dirname(path), '.upload.part')

        def stage() -> None:
            os.makedirs(posixpath.dirname(path), exist_ok=True)
            with open(staging, 'wb') as file:
                file.write(data)

        await _blocking(stage)
        await anyio.sleep(0.01)  # the upload's round trip before the commit
        await _blocking(os.replace, staging, path)


mutant(
    name='stages_through_one_temporary_name',
    kills=['concurrent_writes_to_different_files_land_intact'],
    bug="write_bytes stages every upload at one '<dir>/.upload.part' name, so concurrent writes clobber each other.",
    backend=on_shared_dir(StagesThroughOneTemporaryName),
)


class ListsOnlyTheFirstPage(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return list(await super().list_dir(path))[:1000]


mutant(
    name='lists_only_the_first_page',
    kills=['large_listing_is_complete'],
    bug="list_dir returns the first page of the provider's paginated listing (1,000 keys) and ignores the next token.",
    backend=on_shared_dir(ListsOnlyTheFirstPage),
)


class RejectsLongPaths(LocalWorkspaceBackend):
    @staticmethod
    def _check(path: str) -> None:
        if len(path) > 255:
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        self._check(path)
        await super().write_bytes(path, data)

    async def make_dir(self, path: str) -> None:
        self._check(path)
        await super().make_dir(path)


mutant(
    name='rejects_long_paths',
    kills=['deep_nesting_works'],
    bug='The provider API rejects paths longer than 255 characters, confusing NAME_MAX with PATH_MAX.',
    backend=on_shared_dir(RejectsLongPaths),
)


class MirrorsAStagingDirectory(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        root = await self.working_dir()

        def clear_siblings() -> None:
            parent = posixpath.dirname(path)
            if not os.path.isdir(parent) or not _below(parent, root):
                return
            for name in os.listdir(parent):
                sibling = posixpath.join(parent, name)
                if sibling == path:
                    continue
                _refuse_outside(sibling, root)
                if os.path.isdir(sibling) and not os.path.islink(sibling):
                    shutil.rmtree(sibling)
                else:
                    os.unlink(sibling)

        await _blocking(clear_siblings)
        await super().write_bytes(path, data)


mutant(
    name='mirrors_a_staging_directory',
    kills=['write_keeps_other_files_in_the_directory'],
    bug='write_bytes syncs a staging directory holding only the new file with `rsync --delete`, wiping its siblings.',
    backend=on_shared_dir(MirrorsAStagingDirectory),
)


class EmptyDirectoryIsMissing(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)
        if not entries:
            raise FileNotFoundError(errno.ENOENT, 'no objects under this prefix', path)
        return entries


mutant(
    name='empty_directory_is_missing',
    kills=['list_dir_of_an_empty_directory_is_empty'],
    bug='An object-store backend lists a prefix; an empty directory has no objects, so it raises FileNotFoundError.',
    backend=on_shared_dir(EmptyDirectoryIsMissing),
)


class ReadCacheSurvivesRemove(LocalWorkspaceBackend):
    def __init__(self, working_dir: Path) -> None:
        super().__init__(working_dir)
        self._cache: dict[str, bytes] = {}
        self._stats: dict[str, FileEntry] = {}

    async def read_bytes(self, path: str) -> bytes:
        if path not in self._cache:
            self._cache[path] = await super().read_bytes(path)
        return self._cache[path]

    async def stat(self, path: str) -> FileEntry:
        if path not in self._stats:
            self._stats[path] = await super().stat(path)
        return self._stats[path]


mutant(
    name='read_cache_survives_remove',
    kills=['reading_after_remove_raises_file_not_found'],
    bug='read_bytes and stat serve from a client-side cache that remove() never invalidates.',
    backend=on_shared_dir(ReadCacheSurvivesRemove),
)


class PrunesEmptyParents(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        await super().remove(path)
        root = await self.working_dir()

        def prune() -> None:
            parent = posixpath.dirname(path)
            while _below(parent, root) and not os.listdir(parent):
                os.rmdir(parent)
                parent = posixpath.dirname(parent)

        await _blocking(prune)


mutant(
    name='prunes_empty_parents',
    kills=['removing_a_file_leaves_its_parent'],
    bug='remove() deletes the parents left empty, as object stores do where a directory is only a key prefix.',
    backend=on_shared_dir(PrunesEmptyParents),
)


# --- symlinks ---------------------------------------------------------------------------------------------------


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


mutant(
    name='remove_follows_links',
    kills=['removing_a_symlink_removes_the_link_not_its_target'],
    bug='remove() resolves the path first (like `rm -rf link/`), deleting the target of a link and keeping the link.',
    backend=on_shared_dir(RemoveFollowsLinks),
)


class MemoryRemoveFollowsLinks(InMemoryBackend):
    async def remove(self, path: str) -> None:
        await super().remove(self.tree.realpath(path))


mutant(
    name='memory_remove_follows_links',
    kills=['removing_a_symlink_removes_the_link_not_its_target'],
    bug='A filesystem-only backend resolves the path before deleting, so removing a link deletes its target.',
    backend=in_memory(MemoryRemoveFollowsLinks),
    make_symlink=memory_symlink,
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


mutant(
    name='recursive_remove_follows_links',
    kills=['removing_a_tree_does_not_follow_links_out_of_it'],
    bug='remove() walks the tree by hand with Path.is_dir(), which follows links, and empties directories they reach.',
    backend=on_shared_dir(RecursiveRemoveFollowsLinks),
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


mutant(
    name='make_dir_checks_with_lstat',
    kills=['make_dir_over_a_symlink_to_a_directory_succeeds'],
    bug='make_dir checks the existing entry with lstat, so a symlink to a directory is refused as a file in the way.',
    backend=on_shared_dir(MakeDirChecksWithLstat),
)


class StatSizeFromLstat(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        entry = await super().stat(path)
        if entry.is_dir:
            return entry
        return dataclasses.replace(entry, size=(await _blocking(os.lstat, path)).st_size)


mutant(
    name='stat_size_from_lstat',
    kills=['stat_follows_a_symlink_to_a_file'],
    bug="stat takes the size from lstat, so a symlink to a file reports the length of the link's target path.",
    backend=on_shared_dir(StatSizeFromLstat),
)


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


class RealpathSkipsDanglingLinks(HandRolledRealpath):
    follow_dangling = False


class RealpathFollowsOneHop(HandRolledRealpath):
    follow_chains = False


class RealpathJoinsAbsoluteTargets(HandRolledRealpath):
    absolute_restarts = False


class RealpathCollapsesDotdotFirst(HandRolledRealpath):
    dotdot_from_target = False


class RealpathFromTheWorkingDir(HandRolledRealpath):
    relative_from_link_dir = False


class RealpathKeepsTheSpelling(HandRolledRealpath):
    normalize = False


class RealpathSpinsOnLoops(HandRolledRealpath):
    hop_limit = None


mutant(
    name='realpath_skips_dangling_links',
    kills=['realpath_keeps_the_missing_target_of_a_dangling_link'],
    bug='realpath follows a link only when `test -e` says its target exists, so a dangling link is kept as the link.',
    backend=on_shared_dir(RealpathSkipsDanglingLinks),
)

mutant(
    name='realpath_follows_one_hop',
    kills=['realpath_resolves_a_chain_of_links'],
    bug='realpath replaces a link with its `readlink` target once and never looks at links inside that target.',
    backend=on_shared_dir(RealpathFollowsOneHop),
)

mutant(
    name='realpath_joins_absolute_targets',
    kills=['realpath_follows_an_absolute_target'],
    bug="realpath appends every link target to the link's directory, so an absolute target lands below it.",
    backend=on_shared_dir(RealpathJoinsAbsoluteTargets),
)

mutant(
    name='realpath_collapses_dotdot_first',
    kills=['realpath_climbs_dotdot_from_the_link_target'],
    bug='realpath normalizes the path as text before following links, so `link/..` climbs from the link itself.',
    backend=on_shared_dir(RealpathCollapsesDotdotFirst),
)

mutant(
    name='realpath_from_the_working_dir',
    kills=['realpath_resolves_relative_names_from_the_right_directory'],
    bug="realpath resolves relative link targets from the working directory (the remote shell's cwd), not the link's.",
    backend=on_shared_dir(RealpathFromTheWorkingDir),
)

mutant(
    name='realpath_keeps_the_spelling',
    kills=['realpath_returns_an_absolute_normalized_path'],
    bug='realpath returns the path exactly as given when no component is a link, slashes and dots included.',
    backend=on_shared_dir(RealpathKeepsTheSpelling),
)

mutant(
    name='realpath_spins_on_loops',
    kills=['realpath_through_a_link_loop_is_bounded'],
    bug='realpath follows links without counting them, so a link loop keeps it resolving forever.',
    backend=on_shared_dir(RealpathSpinsOnLoops),
)


# --- lifecycle --------------------------------------------------------------------------------------------------

READY_WAIT = 0.5
"""How long the mutant's sandbox takes to report ready after its create returned."""


class RecordsTheRefAfterReadiness(LazyLocalBackend):
    async def _create_environment(self) -> WorkspaceRef:
        path = await anyio.to_thread.run_sync(self._create)
        # The bug: waits, unshielded, for the sandbox to report ready before recording the ref of what it created.
        await anyio.sleep(READY_WAIT)
        self._ref = WorkspaceRef(provider=LAZY_PROVIDER, id=path)
        return self._ref


mutant(
    name='records_the_ref_after_readiness',
    kills=['cancellation_mid_create_keeps_the_ref'],
    bug='The ref is recorded only after a cancellable wait for readiness; a caller cancelled then loses the sandbox.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    fresh_backend=lambda run_dir: RecordsTheRefAfterReadiness(run_dir / 'fresh'),
)


class ResolvesTheWorkingDirLate(LocalWorkspaceBackend):
    def __init__(self, working_dir: Path) -> None:
        super().__init__(working_dir)
        self._configured = str(working_dir)
        self._connected = False

    async def working_dir(self) -> str:
        resolved = await super().working_dir()
        return resolved if self._connected else self._configured

    async def exists(self, path: str) -> bool:
        self._connected = True
        return await super().exists(path)


def _through_a_link(run_dir: Path) -> WorkspaceBackend:
    """The shared directory reached through a symlink inside the run directory."""
    link = run_dir / 'shared-link'
    if not link.is_symlink():
        link.symlink_to(shared_dir(run_dir), target_is_directory=True)
    return ResolvesTheWorkingDirLate(link)


mutant(
    name='resolves_the_working_dir_late',
    kills=['working_dir_is_stable'],
    bug='working_dir() returns the configured path until a file operation connects, then the resolved one.',
    backend=_through_a_link,
)


class RefKnownAfterConnecting(LocalWorkspaceBackend):
    def __init__(self, ref: WorkspaceRef) -> None:
        super().__init__(ref.id)
        self._connected = False

    @property
    def ref(self) -> WorkspaceRef | None:  # type: ignore[override]  # the bug
        return self._ref if self._connected else None

    async def working_dir(self) -> str:
        path = await super().working_dir()
        self._connected = True
        return path


mutant(
    name='ref_known_after_connecting',
    kills=['attaching_keeps_the_ref_without_creating'],
    bug='An attached backend fills in its ref from the session it opens, so it reports None until its first operation.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    attach_backend=lambda run_dir, ref: RefKnownAfterConnecting(ref),
)


class StartsInTheDefaultDirectory(LocalWorkspaceBackend):
    def __init__(self, ref: WorkspaceRef) -> None:
        super().__init__(Path(ref.id).parent)  # the sandbox's default directory, not the configured one
        self._attached_ref = ref

    @property
    def ref(self) -> WorkspaceRef:
        return self._attached_ref


mutant(
    name='attach_starts_in_the_default_directory',
    kills=['attached_backend_shares_the_working_dir'],
    bug="Attaching by ref drops the working_dir setting, so the backend starts in the sandbox's default directory.",
    backend=on_shared_dir(LocalWorkspaceBackend),
    attach_backend=lambda run_dir, ref: StartsInTheDefaultDirectory(ref),
)


class ProvisionsInTheBackground(LazyLocalBackend):
    def __init__(self, parent: Path, *, ref: WorkspaceRef | None = None) -> None:
        super().__init__(parent, ref=ref)
        if ref is None:
            threading.Thread(target=self._provision, daemon=True).start()

    def _provision(self) -> None:
        self._ref = WorkspaceRef(provider=LAZY_PROVIDER, id=self._create())


mutant(
    name='provisions_in_the_background',
    kills=['building_a_backend_creates_nothing'],
    bug='The constructor starts provisioning a sandbox in a background thread to hide latency: I/O when built.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    fresh_backend=lambda run_dir: ProvisionsInTheBackground(run_dir / 'fresh'),
)


class NewSessionAfterAnError(LocalWorkspaceBackend):
    def _renew(self) -> None:
        self._ref = WorkspaceRef(provider='local-session', id=uuid.uuid4().hex)

    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except OSError:
            self._renew()
            raise

    async def stat(self, path: str) -> FileEntry:
        try:
            return await super().stat(path)
        except OSError:
            self._renew()
            raise

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        try:
            return await super().list_dir(path)
        except OSError:
            self._renew()
            raise


mutant(
    name='new_session_after_an_error',
    kills=['ref_survives_a_failed_operation'],
    bug='Any failed operation makes the client reconnect and take the new session id as its ref.',
    backend=on_shared_dir(NewSessionAfterAnError),
)


class RecordsTheRefAfterFirstSuccess(LazyLocalBackend):
    def __init__(self, parent: Path, *, ref: WorkspaceRef | None = None) -> None:
        super().__init__(parent, ref=ref)
        self._created: WorkspaceRef | None = None

    async def _create_environment(self) -> WorkspaceRef:
        with anyio.CancelScope(shield=True):
            created = WorkspaceRef(provider=LAZY_PROVIDER, id=await anyio.to_thread.run_sync(self._create))
            self._created = created
        return created

    async def stat(self, path: str) -> FileEntry:
        entry = await super().stat(path)
        self._ref = self._ref or self._created  # the bug: recorded only once an operation has succeeded
        return entry

    async def working_dir(self) -> str:
        path = await super().working_dir()
        self._ref = self._ref or self._created
        return path


mutant(
    name='records_the_ref_after_first_success',
    kills=['a_failing_first_operation_still_records_the_ref'],
    bug='The ref is recorded when the first operation succeeds, so a first operation that fails leaves it None.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    fresh_backend=lambda run_dir: RecordsTheRefAfterFirstSuccess(run_dir / 'fresh'),
)
