"""Rules on file operations, checked through `Workspace` so a commands-only backend's shell filesystem counts."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import anyio
from pydantic_ai.workspaces import SupportsCommands, WorkspaceBackend

from ..authoring import (
    commands_of,
    current_platform,
    current_run,
    expect_error,
    lacking,
    paths,
    rule,
    run_environment_tool,
    safe_str,
    scratch,
    skip,
    skip_as_before,
    supplied,
    workspace_of,
)
from ._compare import first_difference

__all__ = ('FileRules',)

LARGE_FILE_BYTES = 8 * 1024 * 1024
FIFO_BOUND = 20.0
"""Seconds (at time scale 1) a call on a FIFO may block before the suite opens the FIFO's other end to end it."""


class FileRules:
    """Rules on `SupportsFilesystem` semantics: bytes, metadata, directories and path errors."""

    @rule(area='files', requires=['filesystem'], upstream=True, timeout=180, must='B33')
    async def test_large_file_round_trip(self, backend: WorkspaceBackend) -> None:
        """An 8 MiB file reads back byte for byte: reads are paged rather than cut at an output cap."""
        workspace = workspace_of(backend)
        data = random.Random(20261129).randbytes(LARGE_FILE_BYTES)
        async with scratch(workspace) as root:
            path = paths.join(root, 'large.bin')
            await workspace.write_bytes(path, data)
            back = await workspace.read_bytes(path)
            if back != data:
                first = first_difference(back, data)
                raise AssertionError(f'read back {len(back)} bytes of {len(data)}, first difference at byte {first}')

    @rule(area='files', requires=['filesystem'], upstream=True, must='B33', grounds=('write_bytes', 'read_bytes'))
    async def test_bytes_round_trip_and_write_creates_parents(self, backend: WorkspaceBackend) -> None:
        """Every byte value round-trips, a write creates missing parents, and a rewrite replaces the whole file."""
        workspace = workspace_of(backend)
        every_byte = bytes(range(256)) + b'\r\n\x00'
        async with scratch(workspace) as root:
            path = paths.join(root, 'new', 'parents', 'data.bin')
            await workspace.write_bytes(path, every_byte)
            back = await workspace.read_bytes(path)
            assert back == every_byte, f'wrote all 256 byte values, read back {len(back)} bytes: {back[:40]!r}...'
            await workspace.write_bytes(path, b'short')
            back = await workspace.read_bytes(path)
            assert back == b'short', f'after rewriting with b"short" the file held {back[:40]!r}'

    @rule(area='files', requires=['filesystem'], upstream=True, must='B38', grounds=('exists',))
    async def test_exists(self, backend: WorkspaceBackend) -> None:
        """`exists` is true for a file and a directory, and false (not an error) for a missing path."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file, folder = paths.join(root, 'file'), paths.join(root, 'folder')
            await workspace.write_bytes(file, b'present')
            await workspace.make_dir(folder)
            for path, expected in (
                (file, True),
                (folder, True),
                (paths.join(root, 'absent'), False),
                (paths.join(root, 'absent', 'deeper'), False),
            ):
                answer = await workspace.exists(path)
                assert answer is expected, f'exists({path!r}) returned {answer!r}, expected {expected}'

    @rule(area='files', requires=['filesystem'], upstream=True, must='B32', grounds=('stat', 'list_dir'))
    async def test_stat_and_list_dir(self, backend: WorkspaceBackend) -> None:
        """`stat` and `list_dir` report each entry's name, absolute path, kind, and a size that is exact or `None`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            folder = paths.join(root, 'folder')
            file = paths.join(folder, 'four.bin')
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

    @rule(area='files', requires=['filesystem'], upstream=True, must='B35', grounds=('make_dir',))
    async def test_make_dir_creates_parents_and_is_idempotent(self, backend: WorkspaceBackend) -> None:
        """`make_dir` creates missing parents, and making an existing directory again succeeds and keeps its files."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'one', 'two', 'three')
            await workspace.make_dir(path)
            assert (await workspace.stat(path)).is_dir, f'{path} is not a directory after make_dir'
            kept = paths.join(path, 'kept')
            await workspace.write_bytes(kept, b'kept')
            await workspace.make_dir(path)
            assert await workspace.read_bytes(kept) == b'kept', 'making an existing directory again lost its files'

    @rule(area='files', requires=['filesystem', 'commands'], upstream=True, must='B02')
    async def test_commands_and_files_share_one_environment(self, backend: WorkspaceBackend) -> None:
        """Files written through the file API are seen by commands, and files commands write are seen by the API."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'shared.txt')
            await workspace.write_bytes(path, b'from-files\n')
            script = 'IFS= read -r line < "$1" && [ "$line" = from-files ] && printf "from-commands\\n" > "$1"'
            result = await commands.run(['sh', '-c', script, 'sh', path])
            assert result.exit_code == 0, f'a command could not read the file the API wrote (exit {result.exit_code})'
            back = await workspace.read_bytes(path)
            assert back == b'from-commands\n', f'the file API read {back!r} after a command rewrote the file'

    @rule(area='files', requires=['filesystem'], upstream=True, must='B15')
    async def test_missing_paths_raise_file_not_found(self, backend: WorkspaceBackend) -> None:
        """`read_bytes`, `stat`, `list_dir` and `remove` of a missing path raise `FileNotFoundError`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            missing = paths.join(root, 'missing')
            for name in ('read_bytes', 'stat', 'list_dir', 'remove'):
                with expect_error(FileNotFoundError, f'{name}({missing!r})'):
                    await getattr(workspace, name)(missing)

    @rule(area='files', requires=['filesystem'], upstream=True, must='B15')
    async def test_reading_a_directory_raises_is_a_directory(self, backend: WorkspaceBackend) -> None:
        """`read_bytes` of a directory raises `IsADirectoryError`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            with expect_error(IsADirectoryError, f'read_bytes of the directory {root!r}'):
                await workspace.read_bytes(root)

    @rule(area='files', requires=['filesystem'], upstream=True, must='B15')
    async def test_listing_a_file_raises_not_a_directory(self, backend: WorkspaceBackend) -> None:
        """`list_dir` of a regular file raises `NotADirectoryError`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = paths.join(root, 'plain')
            await workspace.write_bytes(file, b'plain')
            with expect_error(NotADirectoryError, f'list_dir of the file {file!r}'):
                await workspace.list_dir(file)

    @rule(area='files', requires=['filesystem'], upstream=True, must='B15')
    async def test_writing_to_a_directory_raises_is_a_directory(self, backend: WorkspaceBackend) -> None:
        """`write_bytes` to a directory raises `IsADirectoryError` and leaves the directory as it was."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            folder = paths.join(root, 'folder')
            inside = paths.join(folder, 'inside')
            await workspace.write_bytes(inside, b'inside')
            with expect_error(IsADirectoryError, f'write_bytes to the directory {folder!r}'):
                await workspace.write_bytes(folder, b'clobber')
            assert await workspace.read_bytes(inside) == b'inside', 'the refused write damaged the directory'

    @rule(
        area='files',
        level='extended',
        requires=['filesystem', 'commands', 'posix_shell', 'mkfifo'],
        upstream=True,
        must='F16',
    )
    async def test_fifo_read_does_not_wait_for_writer(self, backend: WorkspaceBackend) -> None:
        """Reading a FIFO raises an `OSError` at once instead of blocking until a writer appears."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            fifo = await _make_fifo(backend, root)
            result, _ = await _at_a_fifo(backend, fifo, lambda: workspace.read_bytes(fifo), 'printf unblocked > "$1"')
            bound = current_run().seconds(FIFO_BOUND)
            assert isinstance(result, OSError), f'reading a FIFO with no writer gave {result!r}' + (
                f' only after the suite wrote to it at {bound:g} s' if result == b'unblocked' else ''
            )

    @rule(
        area='files',
        level='extended',
        requires=['filesystem', 'commands', 'posix_shell', 'mkfifo'],
        since='0.3.0',
        must='F17',
    )
    async def test_writing_to_a_fifo_raises_os_error_and_keeps_it(self, backend: WorkspaceBackend) -> None:
        """`write_bytes` to a FIFO raises an `OSError` at once, instead of blocking on it or replacing it by a file."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            fifo = await _make_fifo(backend, root)
            result, took = await _at_a_fifo(
                backend, fifo, lambda: workspace.write_bytes(fifo, b'written to a fifo'), 'cat -- "$1" > /dev/null'
            )
            kept = await commands.run(['sh', '-c', 'test -p "$1"', 'sh', fifo])
        gave = 'returned normally' if not isinstance(result, Exception) else f'raised {safe_str(result)}'
        bound = current_run().seconds(FIFO_BOUND)
        assert took < bound, f'write_bytes to a FIFO blocked until the suite opened its read end at {bound:g} s'
        assert kept.exit_code == 0, f'write_bytes to a FIFO {gave} and replaced the FIFO (`test -p` failed after it)'
        assert isinstance(result, OSError), f'write_bytes to a FIFO with no reader {gave}, not OSError'

    @rule(area='files', level='extended', requires=['filesystem', 'commands', 'posix_shell'], since='0.3.0')
    async def test_writing_to_a_device_raises_os_error_and_keeps_it(self, backend: WorkspaceBackend) -> None:
        """`write_bytes` to a character device raises an `OSError` and leaves the device node where it was."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            device = paths.join(root, 'null')
            # A second name for /dev/null (char 1, 3), made inside the scratch directory: a write there goes nowhere.
            # Char 1, 3 is the null device on Linux only; elsewhere it may be another device: made on Linux alone.
            script = 'test "$(uname -s)" = Linux || exit 3; mknod "$1" c 1 3 && printf x > "$1"'
            made = await commands.run(['sh', '-c', script, 'sh', device])
            if made.exit_code != 0:
                why = 'not Linux' if made.exit_code == 3 else f'exit {made.exit_code}: {made.stderr.strip()[:160]}'
                skip('environment', f'no writable null device can be made here with `mknod` ({why})')
            result: Exception | None = None
            try:
                await workspace.write_bytes(device, b'written to a device')
            except Exception as error:
                result = error
            kept = await commands.run(['sh', '-c', 'test -c "$1"', 'sh', device])
        gave = 'returned normally' if result is None else f'raised {safe_str(result)}'
        assert kept.exit_code == 0, f'write_bytes to a device {gave} and replaced it (`test -c` failed after it)'
        assert isinstance(result, OSError), f'write_bytes to a character device {gave}, not OSError'

    @rule(
        area='files',
        level='extended',
        requires=['filesystem', 'commands', 'posix_shell', 'shell_permissions'],
        upstream=True,
        must='B15',
    )
    async def test_permission_denied_uses_builtin_error(self, backend: WorkspaceBackend) -> None:
        """Reading or writing a file the command user may not access raises `PermissionError`."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            locked = paths.join(root, 'locked')
            await workspace.write_bytes(locked, b'original')
            await run_environment_tool(backend, ['chmod', '000', locked], 'chmod')
            try:
                probe = await commands.run(['sh', '-c', 'cat -- "$1" >/dev/null 2>&1', 'sh', locked])
                if probe.exit_code == 0:
                    skip_as_before(
                        'runner',
                        'reads mode 000',
                        'the command user read a mode-000 file',
                        'the command user reads a mode-000 file (root or CAP_DAC_OVERRIDE bypasses permissions)',
                    )
                with expect_error(PermissionError, 'read_bytes of a mode-000 file'):
                    await workspace.read_bytes(locked)
                with expect_error(PermissionError, 'write_bytes to a mode-000 file'):
                    await workspace.write_bytes(locked, b'changed')
            finally:
                await commands.run(['chmod', '600', locked])

    @rule(area='files', requires=['filesystem', 'parent_file_errors'], upstream=True, must='B15')
    async def test_file_as_parent_raises_not_a_directory(self, backend: WorkspaceBackend) -> None:
        """Writing or making a directory below a regular file raises `NotADirectoryError` and keeps the file."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = paths.join(root, 'file')
            await workspace.write_bytes(file, b'a file')
            below = paths.join(file, 'below')
            with expect_error(NotADirectoryError, f'write_bytes({below!r}) below a file'):
                await workspace.write_bytes(below, b'data')
            with expect_error(NotADirectoryError, f'make_dir({below!r}) below a file'):
                await workspace.make_dir(below)
            assert await workspace.read_bytes(file) == b'a file', 'the refused operations replaced the file'

    @rule(area='files', requires=['filesystem'], upstream=True, must='B15')
    async def test_making_a_directory_over_a_file_raises_file_exists(self, backend: WorkspaceBackend) -> None:
        """`make_dir` of a path that is a regular file raises `FileExistsError` and keeps the file."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = paths.join(root, 'file')
            await workspace.write_bytes(file, b'a file')
            with expect_error(FileExistsError, f'make_dir({file!r}) over a file'):
                await workspace.make_dir(file)
            assert await workspace.read_bytes(file) == b'a file', 'the refused make_dir replaced the file'

    @rule(area='files', requires=['filesystem'], upstream=True, must='B36', grounds=('remove',))
    async def test_remove_deletes_a_file_or_a_tree(self, backend: WorkspaceBackend) -> None:
        """`remove` deletes a file, or a directory with everything in it, and nothing beside them."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file, tree, kept = (paths.join(root, name) for name in ('file', 'tree', 'kept'))
            await workspace.write_bytes(file, b'x')
            await workspace.write_bytes(paths.join(tree, 'a', 'b', 'deep'), b'x')
            await workspace.write_bytes(paths.join(tree, 'top'), b'x')
            await workspace.write_bytes(kept, b'kept')
            await workspace.remove(file)
            await workspace.remove(tree)
            for gone in (file, tree):
                assert not await workspace.exists(gone), f'{gone} still exists after remove'
            assert await workspace.read_bytes(kept) == b'kept', 'remove also deleted a sibling'

    @rule(area='files', level='extended', requires=['filesystem', 'sacrificial'], upstream=True, must='B37')
    async def test_remove_refuses_the_working_dir_and_its_ancestors(
        self, destructive_backend: Callable[[], WorkspaceBackend] | None
    ) -> None:
        """`remove` of the working directory or of an ancestor raises `ValueError` and deletes nothing.

        Checked only on a sacrificial environment from `destructive_backend`, and only for ancestors that hold
        nothing but the way down to the working directory: a backend that does not refuse can destroy nothing else.
        """
        backend = supplied(destructive_backend, 'sacrificial')()
        workspace = workspace_of(backend)
        working_dir = await workspace.working_dir()
        for path in ('.', working_dir):
            with expect_error(ValueError, f'remove({path!r}) of the working directory'):
                await workspace.remove(path)
            assert await workspace.exists(working_dir), f'remove({path!r}) deleted the working directory'
        child = working_dir
        while child != '/':
            ancestor = paths.dirname(child)
            if not await _holds_only(backend, ancestor, paths.basename(child)):
                break  # it holds other data: asking a non-conforming backend to remove it could destroy that
            with expect_error(ValueError, f'remove({ancestor!r}) of an ancestor of the working directory'):
                await workspace.remove(ancestor)
            assert await workspace.exists(working_dir), f'remove({ancestor!r}) deleted the working directory'
            child = ancestor


async def _at_a_fifo(
    backend: WorkspaceBackend, fifo: str, call: Callable[[], Awaitable[object]], other_end: str
) -> tuple[object, float]:
    """What `call()` on `fifo` returned or raised, and how long it took.

    After `FIFO_BOUND` seconds `sh -c other_end` opens the FIFO's other end, so a call blocked in a thread, which
    can't be cancelled, ends either way.
    """
    outcome: list[object] = []
    bound = current_run().seconds(FIFO_BOUND)

    async def attempt() -> None:
        try:
            outcome.append(await call())
        except Exception as error:
            outcome.append(error)

    async def other_end_after_bound() -> None:
        await anyio.sleep(bound)
        await commands_of(backend).run(['sh', '-c', other_end, 'sh', fifo], timeout=bound)

    started = anyio.current_time()
    async with anyio.create_task_group() as group:
        group.start_soon(other_end_after_bound)
        await attempt()
        group.cancel_scope.cancel()
    return outcome[0], anyio.current_time() - started


async def _make_fifo(backend: WorkspaceBackend, root: str) -> str:
    """A FIFO made with `mkfifo` in `root`; an environment skip when `mkfifo` can't make one here."""
    fifo = paths.join(root, 'fifo')
    made = await run_environment_tool(backend, ['mkfifo', fifo], 'mkfifo')
    if made.exit_code != 0:
        why = f'`mkfifo` cannot make a FIFO here (exit {made.exit_code})'
        lacking(('mkfifo here',), f'`mkfifo` failed (exit {made.exit_code}: {made.stderr.strip()[:200]})', why)
    return fifo


async def _holds_only(backend: WorkspaceBackend, directory: str, name: str) -> bool:
    """Whether `directory` holds exactly `name`, by the file API and, with commands on POSIX, by `ls` too."""
    try:
        names = [entry.name for entry in await workspace_of(backend).list_dir(directory)]
    except OSError:
        return False
    if names != [name]:
        return False
    if isinstance(backend, SupportsCommands) and current_platform() == 'posix':
        result = await backend.run(['sh', '-c', 'ls -A -- "$1"', 'sh', directory])
        return result.exit_code == 0 and result.stdout == f'{name}\n'
    return True
