"""Mutants of the file rules: reads, writes, listings, metadata and removal with one clause broken."""

from __future__ import annotations

import base64
import dataclasses
import errno
import functools
import os
import posixpath
import shutil
import stat as stat_module
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
from pydantic_ai.workspaces import FileEntry, LocalWorkspaceBackend, WorkspaceError

from workspace_conformance.doubles import InMemoryBackend

from ..registry import breaks, breaks_in_memory, mutant
from ._shared import _below, _blocking, _refuse_outside, _sacrificial_dir

MiB = 1024 * 1024


@breaks(
    name='reads_at_most_4mib',
    kills=['large_file_round_trip'],
    bug="read_bytes returns one response of the provider's file API, which holds at most 4 MiB.",
)
class ReadsAtMost4MiB(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path))[: 4 * MiB]


@breaks(
    kills=['bytes_round_trip_and_write_creates_parents', 'large_file_round_trip'],
    bug='write_bytes sends the data as UTF-8 text (a JSON string field), so bytes that are not UTF-8 are mangled.',
)
class WritesThroughATextChannel(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(path, data.decode('utf-8', errors='replace').encode())


@breaks(
    kills=['bytes_round_trip_and_write_creates_parents'],
    bug='write_bytes opens with O_WRONLY|O_CREAT but no O_TRUNC, so a shorter rewrite keeps the old tail.',
)
class WriteDoesNotTruncate(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)

        await _blocking(write)


@breaks(
    kills=['bytes_round_trip_and_write_creates_parents'],
    bug="write_bytes is a plain open(path, 'wb'), which fails when the parent directory does not exist yet.",
)
class WriteDoesNotCreateParents(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            with open(path, 'wb') as file:
                file.write(data)

        await _blocking(write)


@breaks(
    kills=['exists'],
    bug='exists() is implemented as a stat call, so a missing path raises FileNotFoundError instead of False.',
)
class ExistsRaisesForAMissingPath(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        await self.stat(path)
        return True


@breaks(
    kills=['stat_and_list_dir'],
    bug="list_dir fills each entry's path with the bare name the provider's listing returns, not an absolute path.",
)
class ListsRelativePaths(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [dataclasses.replace(entry, path=entry.name) for entry in await super().list_dir(path)]


@breaks(
    kills=['make_dir_creates_parents_and_is_idempotent'],
    bug='make_dir is os.makedirs without exist_ok, so making an existing directory raises FileExistsError.',
)
class MakeDirIsNotIdempotent(LocalWorkspaceBackend):
    async def make_dir(self, path: str) -> None:
        await _blocking(os.makedirs, path)


@breaks(
    kills=['commands_and_files_share_one_environment'],
    bug='write_bytes lands in a client-side cache that read_bytes serves from and that is never flushed to disk.',
)
class WriteBackCache(LocalWorkspaceBackend):
    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        self._cache: dict[str, bytes] = {}

    async def write_bytes(self, path: str, data: bytes) -> None:
        self._cache[path] = data

    async def read_bytes(self, path: str) -> bytes:
        if path in self._cache:
            return self._cache[path]
        return await super().read_bytes(path)


@breaks(
    kills=['missing_paths_raise_file_not_found'], bug='remove() is `rm -rf`, which succeeds silently on a missing path.'
)
class RemoveOfMissingSucceeds(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        with suppress(FileNotFoundError):
            await super().remove(path)


@breaks(
    kills=['missing_paths_raise_file_not_found'],
    bug="list_dir returns the provider's empty listing for a missing directory instead of raising FileNotFoundError.",
)
class ListingAMissingDirIsEmpty(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        try:
            return await super().list_dir(path)
        except FileNotFoundError:
            return []


@breaks(
    kills=['reading_a_directory_raises_is_a_directory'],
    bug="read_bytes of a directory returns b'' (an object store's empty 'folder' object) instead of raising.",
)
class ReadingADirectoryIsEmpty(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except IsADirectoryError:
            return b''


@breaks(
    kills=['listing_a_file_raises_not_a_directory'],
    bug='list_dir of a file returns that one file, as `ls file` prints it, instead of raising NotADirectoryError.',
)
class ListingAFileListsIt(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        try:
            return await super().list_dir(path)
        except NotADirectoryError:
            return [await self.stat(path)]


@breaks(
    kills=['writing_to_a_directory_raises_is_a_directory'],
    bug='write_bytes to a directory deletes the directory and writes a file in its place (`rm -rf` then upload).',
)
class WritingOverADirectoryReplacesIt(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        root = Path(await self.working_dir())

        def clear() -> None:
            target = Path(path)
            # Only below the working directory: the bug may destroy nothing but the rule's scratch data.
            if target.is_dir() and not target.is_symlink() and _below(target, root):
                shutil.rmtree(target)

        await _blocking(clear)
        await super().write_bytes(path, data)


@breaks(
    kills=['fifo_read_does_not_wait_for_writer'],
    bug="read_bytes of a FIFO does a non-blocking read of the empty pipe and returns b'' instead of raising OSError.",
)
class FifoReadsEmpty(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        def read_fifo() -> bytes | None:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                if not stat_module.S_ISFIFO(os.fstat(fd).st_mode):
                    return None
                chunks = []
                with suppress(BlockingIOError):
                    while chunk := os.read(fd, 64 * 1024):
                        chunks.append(chunk)
                return b''.join(chunks)
            finally:
                os.close(fd)

        data = await _blocking(read_fifo)
        return await super().read_bytes(path) if data is None else data


@breaks(
    kills=['permission_denied_uses_builtin_error'],
    bug="A permission denial is wrapped in the backend's generic WorkspaceError instead of raising PermissionError.",
    unprivileged=True,
)
class PermissionIsAWorkspaceError(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except PermissionError as error:
            raise WorkspaceError(f'cannot read {path}: {error}') from error

    async def write_bytes(self, path: str, data: bytes) -> None:
        try:
            await super().write_bytes(path, data)
        except PermissionError as error:
            raise WorkspaceError(f'cannot write {path}: {error}') from error


@breaks(
    kills=['file_as_parent_raises_not_a_directory'],
    bug='Writing below a regular file raises the FileExistsError of `mkdir -p` on the parent, not NotADirectoryError.',
)
class FileParentIsFileExists(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        # `mkdir -p` of the parent first: over a file it fails with EEXIST, which escapes as FileExistsError.
        await _blocking(functools.partial(Path(path).parent.mkdir, parents=True, exist_ok=True))
        await super().write_bytes(path, data)


@breaks(
    kills=['making_a_directory_over_a_file_raises_file_exists'],
    bug='make_dir treats every EEXIST as "already there" and succeeds even when the path is a regular file.',
)
class MakeDirOverAFileSucceeds(LocalWorkspaceBackend):
    async def make_dir(self, path: str) -> None:
        with suppress(FileExistsError):
            await super().make_dir(path)


@breaks(
    kills=['remove_deletes_a_file_or_a_tree'],
    bug='remove() deletes directories with rmdir, which fails on a directory that is not empty.',
)
class RemoveIsRmdir(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        if await _blocking(lambda: os.path.isdir(path) and not os.path.islink(path)):
            await _blocking(os.rmdir, path)
        else:
            await super().remove(path)


class RefusesOnlyTheWorkingDir(LocalWorkspaceBackend):
    """Refuses removing its own working directory, but not an ancestor of it."""

    def __init__(self, working_dir: Path, *, jail: Path) -> None:
        super().__init__(working_dir)
        self._jail = jail

    def _refuses(self, target: Path, root: Path) -> bool:
        return target.resolve() == root

    async def remove(self, path: str) -> None:
        root = Path(await self.working_dir())

        def remove() -> None:
            target = Path(path)
            if not target.is_symlink() and self._refuses(target, root):
                raise ValueError('cannot remove the workspace root')
            if not _below(target, self._jail):
                # Not the modelled bug: the guard that keeps the mutant inside its run directory.
                raise ValueError(f'mutant refuses to touch {path}, outside its run directory')
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()

        await _blocking(remove)


class RefusesNothing(RefusesOnlyTheWorkingDir):
    """Refuses nothing, so `Workspace.remove('.')`, which resolves to the working directory, deletes it."""

    def _refuses(self, target: Path, root: Path) -> bool:
        return False


mutant(
    name='refuses_only_the_working_dir',
    kills=['remove_refuses_the_working_dir_and_its_ancestors'],
    bug='remove() refuses exactly the working directory but deletes a parent of it, and the workspace with it.',
    destructive_backend=lambda run_dir: RefusesOnlyTheWorkingDir(_sacrificial_dir(run_dir), jail=run_dir),
)


mutant(
    name='remove_refuses_nothing',
    kills=['remove_refuses_the_working_dir_and_its_ancestors'],
    bug="remove() has no guard at all, so remove('.') deletes the whole working directory.",
    destructive_backend=lambda run_dir: RefusesNothing(_sacrificial_dir(run_dir), jail=run_dir),
)


@breaks(
    kills=['empty_file_round_trip', 'zero_byte_write_creates_the_file'],
    bug='write_bytes returns early on empty data (the upload API rejects empty bodies): no file, no truncation.',
)
class SkipsEmptyWrites(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        if data:
            await super().write_bytes(path, data)


def _as_folder_marker(entry: FileEntry) -> FileEntry:
    if not entry.is_dir and entry.size == 0:
        return dataclasses.replace(entry, is_dir=True, size=None)
    return entry


@breaks(
    kills=['zero_byte_write_creates_the_file'],
    bug="An object-store backend takes every zero-byte object for a 'folder/' marker and reports it as a directory.",
)
class ZeroByteFilesAreFolderMarkers(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        return _as_folder_marker(await super().stat(path))

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [_as_folder_marker(entry) for entry in await super().list_dir(path)]


@breaks(
    kills=['shorter_overwrite_truncates'],
    bug="write_bytes opens an existing file with 'r+b' and writes over its start, so a shorter rewrite keeps the tail.",
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


@breaks(
    kills=['line_endings_and_nul_bytes_are_preserved'],
    bug='Uploads go through a text-mode channel with universal newlines, turning CRLF and lone CR into LF.',
)
class TranslatesNewlines(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(path, data.replace(b'\r\n', b'\n').replace(b'\r', b'\n'))


@breaks(
    kills=['line_endings_and_nul_bytes_are_preserved'],
    bug='The sandbox agent returns file contents as a C string, so a read ends at the first NUL byte.',
)
class StopsAtNul(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path)).split(b'\x00', 1)[0]


@breaks(
    kills=['invalid_utf8_bytes_are_preserved'],
    bug='read_bytes gets the contents as a JSON string field, so bytes that are not UTF-8 come back as U+FFFD.',
)
class ReadsThroughATextChannel(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path)).decode('utf-8', errors='replace').encode()


@breaks(
    kills=['read_bytes_returns_bytes'],
    bug='read_bytes assembles paged chunks in a bytearray and returns that buffer instead of bytes.',
)
class ReadsIntoABytearray(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        chunks = bytearray()
        chunks.extend(await super().read_bytes(path))
        return chunks  # type: ignore[return-value]  # the bug


@breaks(
    kills=['stat_returns_a_file_entry_with_exact_types'],
    bug="stat passes the provider's JSON number through unconverted, so every size arrives as a float.",
)
class StatSizeIsAFloat(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        entry = await super().stat(path)
        size = None if entry.size is None else float(entry.size)
        return dataclasses.replace(entry, size=size)  # type: ignore[arg-type]  # the bug


@breaks(
    kills=['list_dir_returns_entries_under_the_directory'],
    bug="list_dir returns a generator over the provider's pages instead of a sequence, so it can be walked only once.",
)
class ListsLazily(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)

        def pages() -> Iterator[FileEntry]:
            yield from entries

        return pages()  # type: ignore[return-value]  # the bug


@breaks(
    kills=['list_dir_returns_entries_under_the_directory'],
    bug='list_dir reports the disk space each file uses (st_blocks * 512, as `du` does), not its length in bytes.',
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


@breaks(
    kills=['names_with_control_characters_round_trip'],
    bug='list_dir parses the output of `ls -1` line by line, so a name holding a newline splits into two entries.',
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


@breaks(
    kills=['dotfiles_are_listed'], bug='list_dir runs `ls` without `-A`, so names starting with a dot never appear.'
)
class HidesDotfiles(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [entry for entry in await super().list_dir(path) if not entry.name.startswith('.')]


@breaks(
    kills=['names_with_shell_metacharacters_round_trip'],
    bug='write_bytes builds its shell command with the path in double quotes, so `$`, backquotes and `"` are expanded.',
)
class InterpolatesPathsIntoDoubleQuotes(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        encoded = base64.b64encode(data).decode()
        # The bug: the path is pasted between double quotes, where `$`, backquotes, `"` and `\` are still live.
        script = f'mkdir -p "$(dirname "{path}")" && printf %s {encoded} | base64 -d > "{path}"'
        result = await self.run(script, shell=True)
        if result.exit_code != 0:
            raise OSError(f'write failed: {result.stderr.strip()}')


def _nfc(path: str) -> str:
    return unicodedata.normalize('NFC', path)


@breaks(
    kills=['unicode_names_are_kept_exactly'],
    bug="Paths are NFC-normalized on the way to the provider's API, so NFC and NFD spellings become one file.",
)
class FileApiNormalizesNamesToNfc(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(_nfc(path), data)

    async def read_bytes(self, path: str) -> bytes:
        return await super().read_bytes(_nfc(path))

    async def stat(self, path: str) -> FileEntry:
        return dataclasses.replace(await super().stat(_nfc(path)), name=posixpath.basename(path), path=path)


@breaks_in_memory(
    kills=['unicode_names_are_kept_exactly'],
    bug='A filesystem-only backend on a normalizing store (HFS+-like) writes every name in NFC.',
)
class MemoryNormalizesNamesToNfc(InMemoryBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(_nfc(path), data)


@breaks(
    kills=['exists_below_a_regular_file_is_false'],
    bug='exists() is `os.stat` catching only FileNotFoundError, so a path below a regular file raises ENOTDIR.',
)
class ExistsCatchesOnlyFileNotFound(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        try:
            await _blocking(os.stat, path)
        except FileNotFoundError:
            return False
        return True


@breaks(
    kills=['exists_of_the_working_dir_is_true'],
    bug="exists() answers only for paths that start with '<working dir>/', so the working directory itself is False.",
)
class ExistsOnlyStrictlyInside(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        root = await self.working_dir()
        if not path.startswith(root + '/'):  # the bug: an off-by-one sandbox check that excludes the root itself
            return False
        return await super().exists(path)


@breaks(
    kills=['concurrent_writes_to_different_files_land_intact'],
    bug="write_bytes stages every upload at one '<dir>/.upload.part' name, so concurrent writes clobber each other.",
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


@breaks(
    kills=['large_listing_is_complete', 'listings_of_one_page_and_one_more_are_complete'],
    bug="list_dir returns the first page of the provider's paginated listing (1,000 keys) and ignores the next token.",
)
class ListsOnlyTheFirstPage(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return list(await super().list_dir(path))[:1000]


@breaks(
    kills=['deep_nesting_works'],
    bug='The provider API rejects paths longer than 255 characters, confusing NAME_MAX with PATH_MAX.',
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


@breaks(
    kills=['write_keeps_other_files_in_the_directory'],
    bug='write_bytes syncs a staging directory holding only the new file with `rsync --delete`, wiping its siblings.',
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


@breaks(
    kills=['list_dir_of_an_empty_directory_is_empty'],
    bug='An object-store backend lists a prefix; an empty directory has no objects, so it raises FileNotFoundError.',
)
class EmptyDirectoryIsMissing(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)
        if not entries:
            raise FileNotFoundError(errno.ENOENT, 'no objects under this prefix', path)
        return entries


@breaks(
    kills=['reading_after_remove_raises_file_not_found'],
    bug='read_bytes and stat serve from a client-side cache that remove() never invalidates.',
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


@breaks(
    kills=['removing_a_file_leaves_its_parent'],
    bug='remove() deletes the parents left empty, as object stores do where a directory is only a key prefix.',
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


@breaks(
    kills=['remove_deletes_a_file_or_a_tree'],
    bug='Removing a directory deletes its files but leaves the directory and its subdirectories behind.',
)
class RemoveKeepsNonEmptyDirectories(LocalWorkspaceBackend):
    """`remove` of a directory deletes its files but leaves the directory itself when it had any."""

    async def remove(self, path: str) -> None:
        target = Path(path)
        if target.is_dir() and not target.is_symlink() and any(target.iterdir()):
            for child in target.iterdir():
                if child.is_file():
                    child.unlink()
            return
        await super().remove(path)


@breaks(
    kills=['writing_to_a_fifo_raises_os_error_and_keeps_it'],
    bug='write_bytes writes a temporary file and renames it over the target, so a FIFO there becomes a regular file.',
)
class WritesByRenamingOverTheTarget(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        root = await self.working_dir()

        def write() -> None:
            temporary = f'{path}.partial'
            _refuse_outside(temporary, root)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(temporary, 'wb') as file:
                file.write(data)
            os.replace(temporary, path)

        await _blocking(write)


def _replaced(text: str) -> str:
    """`text` as a name decoded from its bytes with errors='replace': every undecodable byte becomes U+FFFD."""
    return os.fsencode(text).decode(errors='replace')


@breaks(
    kills=['undecodable_name_bytes_round_trip'],
    bug="list_dir decodes name bytes with errors='replace', so a name that is not UTF-8 lists as one no call can open.",
)
class DecodesNamesWithReplacement(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [
            dataclasses.replace(entry, name=_replaced(entry.name), path=_replaced(entry.path))
            for entry in await super().list_dir(path)
        ]


@breaks(
    kills=['files_either_side_of_1_mib_round_trip'],
    bug='read_bytes fetches a file over 1 MiB in 1 MiB ranges and counts them by floor division, losing a partial '
    'last range.',
)
class ReadLosesAPartialLastMiB(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        data = await super().read_bytes(path)
        if len(data) <= MiB:
            return data
        return data[: (len(data) // MiB) * MiB]


@breaks(
    kills=[
        'files_either_side_of_4_mib_round_trip',
        'files_either_side_of_8_mib_round_trip',
        'files_either_side_of_16_mib_round_trip',
    ],
    bug="write_bytes uploads 4 MiB ranges (the file API's request cap) looping up to len(data) - 1, so a last range "
    'of one byte is never sent.',
)
class WriteSkipsAOneByteLastRange(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        ranges = range(0, max(len(data) - 1, 1), 4 * MiB)
        await super().write_bytes(path, b''.join(data[start : start + 4 * MiB] for start in ranges))


@breaks(
    kills=['files_either_side_of_8_mib_round_trip', 'files_either_side_of_16_mib_round_trip'],
    bug='write_bytes sends the first 8 MiB part of a multipart upload and completes the upload without the rest.',
)
class WriteSendsOnlyTheFirstPart(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(path, data[: 8 * MiB])


@breaks(
    kills=['files_either_side_of_16_mib_round_trip'],
    bug='read_bytes takes the file from one HTTP/2 DATA frame, which holds at most 2^24 - 1 bytes.',
)
class ReadsOneHttp2Frame(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path))[: 2**24 - 1]


@breaks(
    kills=['listing_of_5000_entries_is_complete'],
    bug='list_dir stops after four pages of 1,000, a guard against endless pagination, and drops every later entry.',
)
class ListsFourPagesAtMost(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return list(await super().list_dir(path))[:4000]


@breaks(
    kills=['writing_to_a_device_raises_os_error_and_keeps_it'],
    bug='write_bytes opens whatever is at the path for writing, so a device takes the bytes and the call succeeds.',
)
class WritesIntoWhateverIsThere(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        _refuse_outside(path, self._working_dir)

        def write() -> None:
            with open(path, 'wb') as stream:  # no check that it is a regular file
                stream.write(data)

        await _blocking(write)


@breaks(
    kills=['writing_to_a_device_raises_os_error_and_keeps_it'],
    bug='An atomic write renames a temporary file over the path, so a device there becomes a regular file.',
)
class RenamesOverADevice(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        _refuse_outside(path, self._working_dir)

        def write() -> None:
            temporary = f'{path}.wc-tmp'
            Path(temporary).write_bytes(data)
            os.replace(temporary, path)

        await _blocking(write)
