"""The mutants: `LocalWorkspaceBackend` (or `LazyLocalBackend`) with one clause broken the way real backends break it.

Each mutant models a real bug and names the rules it must fail. Every one works only inside the run directory it
is given: the mutants that delete or kill check that what they touch is inside it, so a bug can destroy nothing else.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import posixpath
import shlex
import shutil
import signal
import stat as stat_module
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    LocalWorkspaceBackend,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)

from workspace_conformance.targets.local import LazyLocalBackend

from .registry import mutant, on_shared_dir, shared_dir

MiB = 1024 * 1024
INHERITED_ENV = ('PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE')
"""What `LocalWorkspaceBackend` passes on to commands; the mutants that spawn processes themselves do the same."""


T = TypeVar('T')


async def _blocking(function: Callable[..., T], *args: object) -> T:
    """`function(*args)` in a worker thread: file system calls block."""
    return await anyio.to_thread.run_sync(functools.partial(function, *args))


def _within(path: Path, jail: Path) -> bool:
    """Whether `path` is strictly below `jail` (both resolved): the only places a destructive mutant may touch."""
    resolved, root = path.resolve(), jail.resolve()
    return resolved != root and resolved.is_relative_to(root)


def _sacrificial_dir(run_dir: Path) -> Path:
    """Like the `local` target's sacrificial environments: two levels below a directory of its own."""
    (run_dir / 'destructive').mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix='sacrificial-', dir=run_dir / 'destructive')) / 'chain' / 'workspace'
    path.mkdir(parents=True)
    return path


def _command_env(env: Mapping[str, str] | None) -> dict[str, str]:
    return {name: os.environ[name] for name in INHERITED_ENV if name in os.environ} | dict(env or {})


def _check_form(command: WorkspaceCommand, shell: bool) -> None:
    if isinstance(command, str) != shell:
        raise TypeError('a string command requires shell=True, and an argv sequence shell=False')


# --- commands ---------------------------------------------------------------------------------------------------


class GuessesTheCommandForm(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if isinstance(command, str):
            shell = True
        elif shell:
            command = ' '.join(command)
        return await super().run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='guesses_the_command_form',
    kills=['command_form_must_match_shell'],
    bug='run() guesses the form: a string without shell=True goes through the shell, an argv with it is joined.',
    backend=on_shared_dir(GuessesTheCommandForm),
)


class JoinsArgvWithShell(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if shell and not isinstance(command, str):
            command = shlex.join(command)
        return await super().run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='joins_argv_given_with_shell',
    kills=['command_form_must_match_shell'],
    bug='run() accepts an argv sequence with shell=True by quoting it into one shell string instead of refusing it.',
    backend=on_shared_dir(JoinsArgvWithShell),
)


class FeedsAStrayLine(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if isinstance(command, str):
            command = f'printf "unexpected\\n" | sh -c {shlex.quote(command)}'
        else:
            command = ['sh', '-c', 'printf "unexpected\\n" | "$@"', 'sh', *command]
        return await super().run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='feeds_a_stray_line_to_stdin',
    kills=['stdin_is_at_eof'],
    bug="run() leaves the command's stdin connected to a channel that still holds a stray line (a login banner).",
    backend=on_shared_dir(FeedsAStrayLine),
)


class DropsUndecodableBytes(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        # What decoding with errors='ignore' gives: the undecodable bytes vanish instead of becoming U+FFFD.
        return dataclasses.replace(
            result, stdout=result.stdout.replace('\ufffd', ''), stderr=result.stderr.replace('\ufffd', '')
        )


mutant(
    name='drops_undecodable_bytes',
    kills=['undecodable_command_bytes_are_replaced'],
    bug="Command output is decoded with errors='ignore', silently dropping bytes that are not UTF-8.",
    backend=on_shared_dir(DropsUndecodableBytes),
)


class TruncatesStdout(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        return dataclasses.replace(result, stdout=result.stdout[: 64 * 1024])


mutant(
    name='truncates_stdout_at_64k',
    kills=['command_output_is_complete'],
    bug="stdout is cut at the provider's 64 KiB message size and returned as a successful result.",
    backend=on_shared_dir(TruncatesStdout),
)


class TruncatesStderr(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        return dataclasses.replace(result, stderr=result.stderr[: 64 * 1024])


mutant(
    name='truncates_stderr_at_64k',
    kills=['command_output_is_complete'],
    bug='stderr is kept in a 64 KiB ring buffer for diagnostics only, so a long stderr comes back cut.',
    backend=on_shared_dir(TruncatesStderr),
)


class MergesStderrIntoStdout(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        return dataclasses.replace(result, stdout=result.stdout + result.stderr, stderr='')


mutant(
    name='merges_stderr_into_stdout',
    kills=['result_reports_exit_code_stdout_and_stderr'],
    bug='Commands run on a pty-like channel that merges stderr into stdout, so stderr always comes back empty.',
    backend=on_shared_dir(MergesStderrIntoStdout),
)


class RaisesOnNonZeroExit(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        if result.exit_code != 0:
            raise WorkspaceError(f'command failed with exit code {result.exit_code}: {result.stderr}')
        return result


mutant(
    name='raises_on_non_zero_exit',
    kills=['result_reports_exit_code_stdout_and_stderr'],
    bug='run() treats a non-zero exit as a failure (check=True) and raises instead of returning the result.',
    backend=on_shared_dir(RaisesOnNonZeroExit),
)


class RaisesForAMissingProgram(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if not isinstance(command, str) and command and '/' not in command[0]:
            path = _command_env(env).get('PATH')
            if await _blocking(shutil.which, command[0], os.X_OK, path) is None:
                # What `subprocess.Popen` raises when nothing catches it.
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command[0])
        return await super().run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='raises_for_a_missing_program',
    kills=['a_missing_program_exits_127'],
    bug="The spawn's FileNotFoundError for a missing argv program escapes run() instead of becoming exit 127.",
    backend=on_shared_dir(RaisesForAMissingProgram),
)


class JoinsArgvUnquoted(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if not isinstance(command, str):
            command, shell = ' '.join(command), True
        return await super().run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='joins_argv_unquoted',
    kills=['argv_items_are_literal'],
    bug="An argv is sent to the provider's exec API as ' '.join(argv), so the remote shell splits and expands it.",
    backend=on_shared_dir(JoinsArgvUnquoted),
)


class RunsOnlyTheLastLine(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if isinstance(command, str) and '\n' in command:
            command = command.splitlines()[-1]
        return await super().run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='runs_only_the_last_line',
    kills=['run_starts_in_cwd'],
    bug="A line-oriented exec channel runs only a shell string's last line, dropping Workspace.run's `cd` prefix.",
    backend=on_shared_dir(RunsOnlyTheLastLine),
)


class TimeoutIsAnExitCode(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        try:
            return await super().run(command, shell=shell, env=env, timeout=timeout)
        except WorkspaceTimeoutError as error:
            return CommandResult(exit_code=124, stdout=error.stdout, stderr=error.stderr)


mutant(
    name='timeout_is_an_exit_code',
    kills=['timeout_raises_workspace_timeout_error'],
    bug='A timed-out command is reported like `timeout(1)` does, as exit code 124, instead of raising.',
    backend=on_shared_dir(TimeoutIsAnExitCode),
)


class IgnoresEnv(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await super().run(command, shell=shell, timeout=timeout)


mutant(
    name='ignores_env',
    kills=['env_is_added'],
    bug='run() accepts env= but never passes it to the process it starts.',
    backend=on_shared_dir(IgnoresEnv),
)


# --- files ------------------------------------------------------------------------------------------------------


class ReadsAtMost4MiB(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path))[: 4 * MiB]


mutant(
    name='reads_at_most_4mib',
    kills=['large_file_round_trip'],
    bug="read_bytes returns one response of the provider's file API, which holds at most 4 MiB.",
    backend=on_shared_dir(ReadsAtMost4MiB),
)


class WritesThroughATextChannel(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(path, data.decode('utf-8', errors='replace').encode())


mutant(
    name='writes_through_a_text_channel',
    kills=['bytes_round_trip_and_write_creates_parents', 'large_file_round_trip'],
    bug='write_bytes sends the data as UTF-8 text (a JSON string field), so bytes that are not UTF-8 are mangled.',
    backend=on_shared_dir(WritesThroughATextChannel),
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


mutant(
    name='write_does_not_truncate',
    kills=['bytes_round_trip_and_write_creates_parents'],
    bug='write_bytes opens with O_WRONLY|O_CREAT but no O_TRUNC, so a shorter rewrite keeps the old tail.',
    backend=on_shared_dir(WriteDoesNotTruncate),
)


class WriteNeedsParents(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            with open(path, 'wb') as file:
                file.write(data)

        await _blocking(write)


mutant(
    name='write_does_not_create_parents',
    kills=['bytes_round_trip_and_write_creates_parents'],
    bug="write_bytes is a plain open(path, 'wb'), which fails when the parent directory does not exist yet.",
    backend=on_shared_dir(WriteNeedsParents),
)


class ExistsRaisesForMissing(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        await self.stat(path)
        return True


mutant(
    name='exists_raises_for_a_missing_path',
    kills=['exists'],
    bug='exists() is implemented as a stat call, so a missing path raises FileNotFoundError instead of False.',
    backend=on_shared_dir(ExistsRaisesForMissing),
)


class ListsRelativePaths(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [dataclasses.replace(entry, path=entry.name) for entry in await super().list_dir(path)]


mutant(
    name='lists_relative_paths',
    kills=['stat_and_list_dir'],
    bug="list_dir fills each entry's path with the bare name the provider's listing returns, not an absolute path.",
    backend=on_shared_dir(ListsRelativePaths),
)


class StatDoesNotFollowLinks(LocalWorkspaceBackend):
    async def stat(self, path: str) -> FileEntry:
        info = await _blocking(os.lstat, path)
        is_dir = stat_module.S_ISDIR(info.st_mode)
        return FileEntry(name=posixpath.basename(path), path=path, is_dir=is_dir, size=None if is_dir else info.st_size)


mutant(
    name='stat_does_not_follow_links',
    kills=['realpath_and_entries_follow_symlinks'],
    bug='stat() uses lstat, so a symlink to a directory is reported as a non-directory.',
    backend=on_shared_dir(StatDoesNotFollowLinks),
)


class MakeDirIsNotIdempotent(LocalWorkspaceBackend):
    async def make_dir(self, path: str) -> None:
        await _blocking(os.makedirs, path)


mutant(
    name='make_dir_is_not_idempotent',
    kills=['make_dir_creates_parents_and_is_idempotent'],
    bug='make_dir is os.makedirs without exist_ok, so making an existing directory raises FileExistsError.',
    backend=on_shared_dir(MakeDirIsNotIdempotent),
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


mutant(
    name='write_back_cache',
    kills=['commands_and_files_share_one_environment'],
    bug='write_bytes lands in a client-side cache that read_bytes serves from and that is never flushed to disk.',
    backend=on_shared_dir(WriteBackCache),
)


class RemoveOfMissingSucceeds(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        with suppress(FileNotFoundError):
            await super().remove(path)


mutant(
    name='remove_of_missing_succeeds',
    kills=['missing_paths_raise_file_not_found'],
    bug='remove() is `rm -rf`, which succeeds silently on a missing path.',
    backend=on_shared_dir(RemoveOfMissingSucceeds),
)


class ListingMissingIsEmpty(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        try:
            return await super().list_dir(path)
        except FileNotFoundError:
            return []


mutant(
    name='listing_a_missing_dir_is_empty',
    kills=['missing_paths_raise_file_not_found'],
    bug="list_dir returns the provider's empty listing for a missing directory instead of raising FileNotFoundError.",
    backend=on_shared_dir(ListingMissingIsEmpty),
)


class ReadingADirectoryIsEmpty(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except IsADirectoryError:
            return b''


mutant(
    name='reading_a_directory_is_empty',
    kills=['reading_a_directory_raises_is_a_directory'],
    bug="read_bytes of a directory returns b'' (an object store's empty 'folder' object) instead of raising.",
    backend=on_shared_dir(ReadingADirectoryIsEmpty),
)


class ListingAFileListsIt(LocalWorkspaceBackend):
    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        try:
            return await super().list_dir(path)
        except NotADirectoryError:
            return [await self.stat(path)]


mutant(
    name='listing_a_file_lists_it',
    kills=['listing_a_file_raises_not_a_directory'],
    bug='list_dir of a file returns that one file, as `ls file` prints it, instead of raising NotADirectoryError.',
    backend=on_shared_dir(ListingAFileListsIt),
)


class WritingOverADirectoryReplacesIt(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        root = Path(await self.working_dir())

        def clear() -> None:
            target = Path(path)
            # Only below the working directory: the bug may destroy nothing but the rule's scratch data.
            if target.is_dir() and not target.is_symlink() and _within(target, root):
                shutil.rmtree(target)

        await _blocking(clear)
        await super().write_bytes(path, data)


mutant(
    name='writing_over_a_directory_replaces_it',
    kills=['writing_to_a_directory_raises_is_a_directory'],
    bug='write_bytes to a directory deletes the directory and writes a file in its place (`rm -rf` then upload).',
    backend=on_shared_dir(WritingOverADirectoryReplacesIt),
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


mutant(
    name='fifo_reads_empty',
    kills=['fifo_read_does_not_wait_for_writer'],
    bug="read_bytes of a FIFO does a non-blocking read of the empty pipe and returns b'' instead of raising OSError.",
    backend=on_shared_dir(FifoReadsEmpty),
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


mutant(
    name='permission_is_a_workspace_error',
    kills=['permission_denied_uses_builtin_error'],
    bug="A permission denial is wrapped in the backend's generic WorkspaceError instead of raising PermissionError.",
    backend=on_shared_dir(PermissionIsAWorkspaceError),
    unprivileged=True,
)


class FileParentIsFileExists(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        # `mkdir -p` of the parent first: over a file it fails with EEXIST, which escapes as FileExistsError.
        await _blocking(functools.partial(Path(path).parent.mkdir, parents=True, exist_ok=True))
        await super().write_bytes(path, data)


mutant(
    name='file_parent_is_file_exists',
    kills=['file_as_parent_raises_not_a_directory'],
    bug='Writing below a regular file raises the FileExistsError of `mkdir -p` on the parent, not NotADirectoryError.',
    backend=on_shared_dir(FileParentIsFileExists),
)


class MakeDirOverAFileSucceeds(LocalWorkspaceBackend):
    async def make_dir(self, path: str) -> None:
        with suppress(FileExistsError):
            await super().make_dir(path)


mutant(
    name='make_dir_over_a_file_succeeds',
    kills=['making_a_directory_over_a_file_raises_file_exists'],
    bug='make_dir treats every EEXIST as "already there" and succeeds even when the path is a regular file.',
    backend=on_shared_dir(MakeDirOverAFileSucceeds),
)


class RemoveIsRmdir(LocalWorkspaceBackend):
    async def remove(self, path: str) -> None:
        if await _blocking(lambda: os.path.isdir(path) and not os.path.islink(path)):
            await _blocking(os.rmdir, path)
        else:
            await super().remove(path)


mutant(
    name='remove_is_rmdir',
    kills=['remove_deletes_a_file_or_a_tree'],
    bug='remove() deletes directories with rmdir, which fails on a directory that is not empty.',
    backend=on_shared_dir(RemoveIsRmdir),
)


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
            if not _within(target, self._jail):
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
    backend=on_shared_dir(LocalWorkspaceBackend),
    destructive_backend=lambda run_dir: RefusesOnlyTheWorkingDir(_sacrificial_dir(run_dir), jail=run_dir),
)

mutant(
    name='remove_refuses_nothing',
    kills=['remove_refuses_the_working_dir_and_its_ancestors'],
    bug="remove() has no guard at all, so remove('.') deletes the whole working directory.",
    backend=on_shared_dir(LocalWorkspaceBackend),
    destructive_backend=lambda run_dir: RefusesNothing(_sacrificial_dir(run_dir), jail=run_dir),
)


# --- symlinks ---------------------------------------------------------------------------------------------------


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


mutant(
    name='listing_stats_every_entry',
    kills=['symlink_loop_does_not_break_listing'],
    bug='list_dir stats every entry and lets the ELOOP of a symlink loop fail the whole listing.',
    backend=on_shared_dir(ListingStatsEveryEntry),
)


class RealpathIsNormpath(LocalWorkspaceBackend):
    async def realpath(self, path: str) -> str:
        return posixpath.normpath(path)


mutant(
    name='realpath_is_normpath',
    kills=['realpath_and_entries_follow_symlinks'],
    bug='realpath only normalizes the path as text (posixpath.normpath) and follows no symlinks.',
    backend=on_shared_dir(RealpathIsNormpath),
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


mutant(
    name='atomic_write_replaces_links',
    kills=['writes_go_through_a_symlink'],
    bug='write_bytes writes a temporary file and renames it onto the path, replacing a symlink with a regular file.',
    backend=on_shared_dir(AtomicWriteReplacesLinks),
)


class StrictRealpath(LocalWorkspaceBackend):
    async def realpath(self, path: str) -> str:
        return await _blocking(functools.partial(os.path.realpath, path, strict=True))


mutant(
    name='strict_realpath',
    kills=['native_realpath_keeps_the_working_dir_and_missing_names'],
    bug='realpath resolves with strict=True (like `readlink -e`), so a path with missing names raises.',
    backend=on_shared_dir(StrictRealpath),
)


# --- lifecycle --------------------------------------------------------------------------------------------------


class RefAndWorkingDirOnly:
    """A backend that declares the environment but forgot to implement any way into it."""

    def __init__(self, working_dir: Path) -> None:
        self._working_dir = working_dir.resolve()
        self._ref = WorkspaceRef(provider='local', id=str(self._working_dir))

    @property
    def ref(self) -> WorkspaceRef:
        return self._ref

    async def working_dir(self) -> str:
        return str(self._working_dir)


mutant(
    name='ref_and_working_dir_only',
    kills=['has_the_required_members'],
    bug='A backend implements only ref and working_dir, neither SupportsCommands nor SupportsFilesystem.',
    backend=lambda run_dir: RefAndWorkingDirOnly(shared_dir(run_dir)),
)


class NoRefMember:
    """Commands and working directory delegated to a local backend, but no `ref` property."""

    def __init__(self, working_dir: Path) -> None:
        self._local = LocalWorkspaceBackend(working_dir)

    async def working_dir(self) -> str:
        return await self._local.working_dir()

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await self._local.run(command, shell=shell, env=env, timeout=timeout)


mutant(
    name='no_ref_member',
    kills=['has_the_required_members'],
    bug='A backend written before refs existed has commands and working_dir but no ref property.',
    backend=lambda run_dir: NoRefMember(shared_dir(run_dir)),  # type: ignore[arg-type,return-value]  # the bug
)


class WorkingDirWithTrailingSlash(LocalWorkspaceBackend):
    async def working_dir(self) -> str:
        return await super().working_dir() + '/'


mutant(
    name='working_dir_with_trailing_slash',
    kills=['working_dir_is_canonical'],
    bug="working_dir() returns the provider's path spelled with a trailing '/', which is not normalized.",
    backend=on_shared_dir(WorkingDirWithTrailingSlash),
)


class WorkingDirAsConfigured(LocalWorkspaceBackend):
    def __init__(self, working_dir: Path) -> None:
        super().__init__(working_dir)
        self._configured = str(working_dir)

    async def working_dir(self) -> str:
        await super().working_dir()
        return self._configured


def _through_a_link(run_dir: Path) -> WorkspaceBackend:
    """The shared directory reached through a symlink inside the run directory."""
    link = run_dir / 'shared-link'
    if not link.is_symlink():
        link.symlink_to(shared_dir(run_dir), target_is_directory=True)
    return WorkingDirAsConfigured(link)


mutant(
    name='working_dir_keeps_symlinks',
    kills=['working_dir_is_canonical'],
    bug='working_dir() returns the configured path without resolving its symlinks, so `pwd -P` disagrees with it.',
    backend=_through_a_link,
)


class NewRefOnEveryAccess(LocalWorkspaceBackend):
    @property
    def ref(self) -> WorkspaceRef:
        return WorkspaceRef(provider='local-session', id=uuid.uuid4().hex)


mutant(
    name='new_ref_on_every_access',
    kills=['ref_exists_after_the_first_operation_and_is_stable'],
    bug='ref builds a new WorkspaceRef from a fresh session id on every access instead of keeping the first.',
    backend=on_shared_dir(NewRefOnEveryAccess),
)


class RefNeverSet(LocalWorkspaceBackend):
    @property
    def ref(self) -> None:  # type: ignore[override]  # the bug
        return None


mutant(
    name='ref_never_set',
    kills=['ref_exists_after_the_first_operation_and_is_stable'],
    bug='ref is only filled in by an explicit create() call, so it stays None after operations create the environment.',
    backend=on_shared_dir(RefNeverSet),
)


class UnlockedLazyBackend(LazyLocalBackend):
    """`LazyLocalBackend` without its creation lock: every concurrent first use creates an environment."""

    async def _connect(self) -> LocalWorkspaceBackend:
        if self._local is None:
            # The creation awaits a thread, so every concurrent caller gets here before any of them finishes.
            ref = self._ref or await self._create_environment()
            self._local = LocalWorkspaceBackend(ref.id)
        return self._local


mutant(
    name='unlocked_first_use',
    kills=['concurrent_first_use_shares_one_environment'],
    bug='First use checks "no environment yet" and creates one without a lock, so concurrent first uses each create.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    fresh_backend=lambda run_dir: UnlockedLazyBackend(run_dir / 'fresh'),
)


mutant(
    name='attach_ignores_the_ref',
    kills=['a_backend_attached_by_ref_reaches_the_same_environment'],
    bug='The attach path drops the ref it is given and builds a backend that creates a new environment.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    attach_backend=lambda run_dir, ref: LazyLocalBackend(run_dir / 'fresh'),
)


class DestroyedIsANormalExit(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        try:
            return await super().run(command, shell=shell, env=env, timeout=timeout)
        except WorkspaceUnavailableError as error:
            return CommandResult(exit_code=0, stdout='', stderr=str(error))


mutant(
    name='destroyed_is_a_normal_exit',
    kills=['destroying_environment_during_command_raises_unavailable'],
    bug='run() reports a command whose environment was destroyed under it as an ordinary exit instead of raising.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    destructive_backend=lambda run_dir: DestroyedIsANormalExit(_sacrificial_dir(run_dir)),
)


def _recreating_attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    path = Path(ref.id)
    if _within(path, run_dir):  # the bug stays inside the run directory
        path.mkdir(parents=True, exist_ok=True)
    return LocalWorkspaceBackend(path)


mutant(
    name='attach_recreates_a_destroyed_environment',
    kills=['attaching_to_a_destroyed_environment_raises_unavailable'],
    bug="Attaching by ref runs `mkdir -p` on the ref's directory, silently recreating a destroyed environment empty.",
    backend=on_shared_dir(LocalWorkspaceBackend),
    attach_backend=_recreating_attach,
)


# --- processes --------------------------------------------------------------------------------------------------


class WaitsForPipeEof(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        _check_form(command, shell)
        cwd = await self.working_dir()
        try:
            with anyio.fail_after(timeout):
                # `run_process` reads both pipes to end of file, so it waits for whoever else holds them.
                done = await anyio.run_process(
                    command,
                    cwd=cwd,
                    env=_command_env(env),
                    stdin=subprocess.DEVNULL,
                    check=False,
                    start_new_session=True,
                )
        except TimeoutError as error:
            raise WorkspaceTimeoutError(f'command timed out after {timeout:g}s') from error
        return CommandResult(
            exit_code=done.returncode,
            stdout=done.stdout.decode(errors='replace'),
            stderr=done.stderr.decode(errors='replace'),
        )


mutant(
    name='waits_for_pipe_eof',
    kills=['background_child_does_not_hold_up_completed_command'],
    bug='run() waits for end of file on the output pipes, so a background child holding stdout delays it.',
    backend=on_shared_dir(WaitsForPipeEof),
)


class AbandonsOnCancel(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        _check_form(command, shell)
        cwd = await self.working_dir()

        def spawn() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                command,
                shell=shell,
                cwd=cwd,
                env=_command_env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )

        process = await _blocking(spawn)
        try:
            # A cancelled caller abandons the thread, and with it the process, which keeps running.
            stdout, stderr = await anyio.to_thread.run_sync(
                functools.partial(process.communicate, timeout=timeout), abandon_on_cancel=True
            )
        except subprocess.TimeoutExpired as error:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await _blocking(process.communicate)
            raise WorkspaceTimeoutError(f'command timed out after {timeout:g}s') from error
        return CommandResult(
            exit_code=process.returncode,
            stdout=stdout.decode(errors='replace'),
            stderr=stderr.decode(errors='replace'),
        )


mutant(
    name='abandons_the_process_on_cancel',
    kills=['cancellation_stops_foreground_work'],
    bug='A cancelled run() abandons the worker thread waiting on the process and never kills the process.',
    backend=on_shared_dir(AbandonsOnCancel),
)


def _restarting_attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    """Attach as a sandbox that restarts on attach: every process working in the environment is killed first."""
    root = Path(ref.id).resolve()
    if _within(root, run_dir):  # never anything outside the run directory
        for entry in Path('/proc').iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cwd = Path(os.readlink(entry / 'cwd'))
            except OSError:
                continue
            if cwd == root or cwd.is_relative_to(root):
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)
    return LocalWorkspaceBackend(ref.id)


mutant(
    name='attach_restarts_the_sandbox',
    kills=['a_backend_attached_by_ref_reaches_a_detached_process'],
    bug='Attaching by ref restarts the sandbox, killing every process that was running in the environment.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    attach_backend=_restarting_attach,
)
