"""Rules on file operations, checked through `Workspace` so a commands-only backend's shell filesystem counts."""

from __future__ import annotations

import posixpath
import random
from collections.abc import Callable

import anyio
from pydantic_ai.workspaces import SupportsCommands, WorkspaceBackend

from ._guard import current_run
from ._rules import rule
from ._support import commands_of, expect_error, require_switch, run_tool, scratch, skip, workspace_of

__all__ = ('FileRules',)

LARGE_FILE_BYTES = 8 * 1024 * 1024


class FileRules:
    """Rules on `SupportsFilesystem` semantics: bytes, metadata, directories and path errors."""

    @rule(area='files', requires=['filesystem'], upstream=True, timeout=180)
    async def test_large_file_round_trip(self, backend: WorkspaceBackend) -> None:
        """An 8 MiB file reads back byte for byte: reads are paged rather than cut at an output cap."""
        workspace = workspace_of(backend)
        data = random.Random(20261129).randbytes(LARGE_FILE_BYTES)
        async with scratch(workspace) as root:
            path = posixpath.join(root, 'large.bin')
            await workspace.write_bytes(path, data)
            back = await workspace.read_bytes(path)
            if back != data:
                first = next(
                    (i for i, (a, b) in enumerate(zip(back, data, strict=False)) if a != b), min(len(back), len(data))
                )
                raise AssertionError(f'read back {len(back)} bytes of {len(data)}, first difference at byte {first}')

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_bytes_round_trip_and_write_creates_parents(self, backend: WorkspaceBackend) -> None:
        """Every byte value round-trips, a write creates missing parents, and a rewrite replaces the whole file."""
        workspace = workspace_of(backend)
        every_byte = bytes(range(256)) + b'\r\n\x00'
        async with scratch(workspace) as root:
            path = posixpath.join(root, 'new', 'parents', 'data.bin')
            await workspace.write_bytes(path, every_byte)
            back = await workspace.read_bytes(path)
            assert back == every_byte, f'wrote all 256 byte values, read back {len(back)} bytes: {back[:40]!r}...'
            await workspace.write_bytes(path, b'short')
            back = await workspace.read_bytes(path)
            assert back == b'short', f'after rewriting with b"short" the file held {back[:40]!r}'

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_exists(self, backend: WorkspaceBackend) -> None:
        """`exists` is true for a file and a directory, and false (not an error) for a missing path."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file, folder = posixpath.join(root, 'file'), posixpath.join(root, 'folder')
            await workspace.write_bytes(file, b'present')
            await workspace.make_dir(folder)
            for path, expected in (
                (file, True),
                (folder, True),
                (posixpath.join(root, 'absent'), False),
                (posixpath.join(root, 'absent', 'deeper'), False),
            ):
                answer = await workspace.exists(path)
                assert answer is expected, f'exists({path!r}) returned {answer!r}, expected {expected}'

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_stat_and_list_dir(self, backend: WorkspaceBackend) -> None:
        """`stat` and `list_dir` report each entry's name, absolute path, kind, and a size that is exact or `None`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            folder = posixpath.join(root, 'folder')
            file = posixpath.join(folder, 'four.bin')
            await workspace.write_bytes(file, b'1234')
            entry = await workspace.stat(file)
            observed = (entry.name, entry.path, entry.is_dir)
            assert observed == ('four.bin', file, False), f'stat of a file gave {observed!r}'
            assert entry.size in (None, 4), f'stat of a 4-byte file gave size {entry.size!r}'
            entry = await workspace.stat(folder)
            observed = (entry.name, entry.path, entry.is_dir)
            assert observed == ('folder', folder, True), f'stat of a directory gave {observed!r}'
            listed = [(item.name, item.path, item.is_dir) for item in await workspace.list_dir(root)]
            assert listed == [('folder', folder, True)], f'list_dir of the scratch directory gave {listed!r}'
            inner = list(await workspace.list_dir(folder))
            listed = [(item.name, item.path, item.is_dir) for item in inner]
            assert listed == [('four.bin', file, False)], f'list_dir of a directory with one file gave {listed!r}'
            assert inner[0].size in (None, 4), f'list_dir gave a 4-byte file the size {inner[0].size!r}'

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_make_dir_creates_parents_and_is_idempotent(self, backend: WorkspaceBackend) -> None:
        """`make_dir` creates missing parents, and making an existing directory again succeeds and keeps its files."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = posixpath.join(root, 'one', 'two', 'three')
            await workspace.make_dir(path)
            assert (await workspace.stat(path)).is_dir, f'{path} is not a directory after make_dir'
            kept = posixpath.join(path, 'kept')
            await workspace.write_bytes(kept, b'kept')
            await workspace.make_dir(path)
            assert await workspace.read_bytes(kept) == b'kept', 'making an existing directory again lost its files'

    @rule(area='files', requires=['filesystem', 'commands'], upstream=True)
    async def test_commands_and_files_share_one_environment(self, backend: WorkspaceBackend) -> None:
        """Files written through the file API are seen by commands, and files commands write are seen by the API."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = posixpath.join(root, 'shared.txt')
            await workspace.write_bytes(path, b'from-files\n')
            script = 'IFS= read -r line < "$1" && [ "$line" = from-files ] && printf "from-commands\\n" > "$1"'
            result = await commands.run(['sh', '-c', script, 'sh', path])
            assert result.exit_code == 0, f'a command could not read the file the API wrote (exit {result.exit_code})'
            back = await workspace.read_bytes(path)
            assert back == b'from-commands\n', f'the file API read {back!r} after a command rewrote the file'

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_missing_paths_raise_file_not_found(self, backend: WorkspaceBackend) -> None:
        """`read_bytes`, `stat`, `list_dir` and `remove` of a missing path raise `FileNotFoundError`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            missing = posixpath.join(root, 'missing')
            for name in ('read_bytes', 'stat', 'list_dir', 'remove'):
                with expect_error(FileNotFoundError, f'{name}({missing!r})'):
                    await getattr(workspace, name)(missing)

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_reading_a_directory_raises_is_a_directory(self, backend: WorkspaceBackend) -> None:
        """`read_bytes` of a directory raises `IsADirectoryError`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            with expect_error(IsADirectoryError, f'read_bytes of the directory {root!r}'):
                await workspace.read_bytes(root)

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_listing_a_file_raises_not_a_directory(self, backend: WorkspaceBackend) -> None:
        """`list_dir` of a regular file raises `NotADirectoryError`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = posixpath.join(root, 'plain')
            await workspace.write_bytes(file, b'plain')
            with expect_error(NotADirectoryError, f'list_dir of the file {file!r}'):
                await workspace.list_dir(file)

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_writing_to_a_directory_raises_is_a_directory(self, backend: WorkspaceBackend) -> None:
        """`write_bytes` to a directory raises `IsADirectoryError` and leaves the directory as it was."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            folder = posixpath.join(root, 'folder')
            inside = posixpath.join(folder, 'inside')
            await workspace.write_bytes(inside, b'inside')
            with expect_error(IsADirectoryError, f'write_bytes to the directory {folder!r}'):
                await workspace.write_bytes(folder, b'clobber')
            assert await workspace.read_bytes(inside) == b'inside', 'the refused write damaged the directory'

    @rule(area='files', level='extended', requires=['filesystem', 'commands', 'posix_shell', 'mkfifo'], upstream=True)
    async def test_fifo_read_does_not_wait_for_writer(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        """Reading a FIFO raises an `OSError` at once instead of blocking until a writer appears."""
        require_switch(has_real_posix_shell, 'has_real_posix_shell', 'the backend has no FIFOs')
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            fifo = posixpath.join(root, 'fifo')
            made = await run_tool(backend, ['mkfifo', fifo], 'mkfifo')
            if made.exit_code != 0:
                skip('environment', f'`mkfifo` cannot make a FIFO here (exit {made.exit_code})')
            outcome: list[BaseException | bytes] = []
            bound = current_run().seconds(20)

            async def read() -> None:
                try:
                    outcome.append(await workspace.read_bytes(fifo))
                except Exception as error:
                    outcome.append(error)

            async def unblock_after_bound() -> None:
                # A reader stuck in a thread can't be cancelled: give it a writer so the rule ends either way.
                await anyio.sleep(bound)
                await commands.run(['sh', '-c', 'printf unblocked > "$1"', 'sh', fifo], timeout=bound)

            async with anyio.create_task_group() as group:
                group.start_soon(unblock_after_bound)
                await read()
                group.cancel_scope.cancel()
            result = outcome[0]
            assert isinstance(result, OSError), f'reading a FIFO with no writer gave {result!r}' + (
                f' only after the suite wrote to it at {bound:g} s' if result == b'unblocked' else ''
            )

    @rule(area='files', level='extended', requires=['filesystem', 'commands', 'posix_shell'], upstream=True)
    async def test_permission_denied_uses_builtin_error(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool, filesystem_honors_shell_permissions: bool
    ) -> None:
        """Reading or writing a file the command user may not access raises `PermissionError`."""
        require_switch(has_real_posix_shell, 'has_real_posix_shell', 'the backend has no permissions')
        require_switch(
            filesystem_honors_shell_permissions,
            'filesystem_honors_shell_permissions',
            "the provider's file API bypasses the command user's permissions",
        )
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            locked = posixpath.join(root, 'locked')
            await workspace.write_bytes(locked, b'original')
            await run_tool(backend, ['chmod', '000', locked], 'chmod')
            try:
                probe = await commands.run(['sh', '-c', 'cat -- "$1" >/dev/null 2>&1', 'sh', locked])
                if probe.exit_code == 0:
                    skip(
                        'runner',
                        'the command user reads a mode-000 file (root or CAP_DAC_OVERRIDE bypasses permissions)',
                    )
                with expect_error(PermissionError, 'read_bytes of a mode-000 file'):
                    await workspace.read_bytes(locked)
                with expect_error(PermissionError, 'write_bytes to a mode-000 file'):
                    await workspace.write_bytes(locked, b'changed')
            finally:
                await commands.run(['chmod', '600', locked])

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_file_as_parent_raises_not_a_directory(
        self, backend: WorkspaceBackend, enforces_parent_file_errors: bool
    ) -> None:
        """Writing or making a directory below a regular file raises `NotADirectoryError` and keeps the file."""
        require_switch(enforces_parent_file_errors, 'enforces_parent_file_errors', 'the backend has no path traversal')
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = posixpath.join(root, 'file')
            await workspace.write_bytes(file, b'a file')
            below = posixpath.join(file, 'below')
            with expect_error(NotADirectoryError, f'write_bytes({below!r}) below a file'):
                await workspace.write_bytes(below, b'data')
            with expect_error(NotADirectoryError, f'make_dir({below!r}) below a file'):
                await workspace.make_dir(below)
            assert await workspace.read_bytes(file) == b'a file', 'the refused operations replaced the file'

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_making_a_directory_over_a_file_raises_file_exists(self, backend: WorkspaceBackend) -> None:
        """`make_dir` of a path that is a regular file raises `FileExistsError` and keeps the file."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = posixpath.join(root, 'file')
            await workspace.write_bytes(file, b'a file')
            with expect_error(FileExistsError, f'make_dir({file!r}) over a file'):
                await workspace.make_dir(file)
            assert await workspace.read_bytes(file) == b'a file', 'the refused make_dir replaced the file'

    @rule(area='files', requires=['filesystem'], upstream=True)
    async def test_remove_deletes_a_file_or_a_tree(self, backend: WorkspaceBackend) -> None:
        """`remove` deletes a file, or a directory with everything in it, and nothing beside them."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file, tree, kept = (posixpath.join(root, name) for name in ('file', 'tree', 'kept'))
            await workspace.write_bytes(file, b'x')
            await workspace.write_bytes(posixpath.join(tree, 'a', 'b', 'deep'), b'x')
            await workspace.write_bytes(posixpath.join(tree, 'top'), b'x')
            await workspace.write_bytes(kept, b'kept')
            await workspace.remove(file)
            await workspace.remove(tree)
            for gone in (file, tree):
                assert not await workspace.exists(gone), f'{gone} still exists after remove'
            assert await workspace.read_bytes(kept) == b'kept', 'remove also deleted a sibling'

    @rule(area='files', level='extended', requires=['filesystem', 'fresh'], upstream=True)
    async def test_remove_refuses_the_working_dir_and_its_ancestors(
        self, destructive_backend: Callable[[], WorkspaceBackend] | None
    ) -> None:
        """`remove` of the working directory or of an ancestor raises `ValueError` and deletes nothing.

        Checked only on a sacrificial environment from `destructive_backend`, and only for ancestors that hold
        nothing but the way down to the working directory: a backend that does not refuse can destroy nothing else.
        """
        if destructive_backend is None:
            skip(
                'fixture-missing',
                'provide `destructive_backend` (or `fresh_backend`): this rule never asks a shared environment '
                'to remove its own working directory',
            )
        backend = destructive_backend()
        workspace = workspace_of(backend)
        working_dir = await workspace.working_dir()
        for path in ('.', working_dir):
            with expect_error(ValueError, f'remove({path!r}) of the working directory'):
                await workspace.remove(path)
            assert await workspace.exists(working_dir), f'remove({path!r}) deleted the working directory'
        child = working_dir
        while child != '/':
            ancestor = posixpath.dirname(child)
            if not await _holds_only(backend, ancestor, posixpath.basename(child)):
                break  # it holds other data: asking a non-conforming backend to remove it could destroy that
            with expect_error(ValueError, f'remove({ancestor!r}) of an ancestor of the working directory'):
                await workspace.remove(ancestor)
            assert await workspace.exists(working_dir), f'remove({ancestor!r}) deleted the working directory'
            child = ancestor


async def _holds_only(backend: WorkspaceBackend, directory: str, name: str) -> bool:
    """Whether `directory` holds exactly `name`, by the file API and, when there are commands, by `ls` too."""
    try:
        names = [entry.name for entry in await workspace_of(backend).list_dir(directory)]
    except OSError:
        return False
    if names != [name]:
        return False
    if isinstance(backend, SupportsCommands):
        result = await backend.run(['sh', '-c', 'ls -A -- "$1"', 'sh', directory])
        return result.exit_code == 0 and result.stdout == f'{name}\n'
    return True
