"""Rules on file operations' edge cases: empty and truncated content, exact bytes and names, listings, nesting."""

from __future__ import annotations

import errno
import random
from collections.abc import Sequence

import anyio
from pydantic_ai.workspaces import FileEntry, SupportsCommands, Workspace, WorkspaceBackend

from ..authoring import (
    commands_of,
    current_platform,
    expect_error,
    gather,
    paths,
    rule,
    scratch,
    skip,
    workspace_of,
)
from ..strategies import windows_name
from ._entries import entry_names, make_entries

__all__ = ('FileEdgeRules',)

LARGE_LISTING_ENTRIES = 2000
MODE_751 = '-rwxr-x--x'
"""`ls -l`'s spelling of mode 0751: every permission class different, so a mask or a default mode shows."""
DEEP_LEVELS = 40
SHELL_METACHARACTER_NAMES = (
    'with space',
    ' leading and trailing space ',
    '-leading-dash',
    "it's",
    '"double"',
    '$HOME',
    '$(echo x)',
    '`tick`',
    'star*',
    'question?',
    '[ab]',
    'back\\slash',
    'semi;colon',
    'amp&pipe|',
    '<redirect>',
    '#hash',
    '~tilde',
    '!bang',
    '{brace,list}',
)
CONTROL_CHARACTER_NAMES = (
    'tab\there',
    'new\nline',
    'trailing-newline\n',
    '\nleading-newline',
    'carriage\rreturn',
    'vertical\x0btab',
    'form\x0cfeed',
    'escape\x1b[0m',
    'bell\x07',
)
UNDECODABLE_BYTES = b'caf\xe9'
"""A Latin-1 name: the byte 0xE9 alone is not UTF-8."""
UNDECODABLE_NAME = UNDECODABLE_BYTES.decode(errors='surrogateescape')
"""The name as `os.fsdecode` spells it: 'caf\\udce9'."""
UNDECODABLE_OCTAL = 'caf\\351'
"""The name as a `printf` format of plain ASCII."""
UNICODE_NAMES = (
    'caf\u00e9',  # NFC: one code point for the accented letter
    'cafe\u0301',  # NFD: `e` then a combining acute accent; a different name on POSIX
    'Stra\u00dfe',
    '\u65e5\u672c\u8a9e',
    '\u05e2\u05d1\u05e8\u05d9\u05ea',
    '\U0001f642',
)


class FileEdgeRules:
    """Rules on `SupportsFilesystem` edge cases beyond the basics: content, names, listings and nesting."""

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_empty_file_round_trip(self, backend: WorkspaceBackend) -> None:
        """Writing zero bytes leaves an empty file: a new file and an emptied one both read back as `b''`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            new, emptied = paths.join(root, 'new-empty'), paths.join(root, 'emptied')
            await workspace.write_bytes(new, b'')
            back = await workspace.read_bytes(new)
            assert back == b'', f'a new file written with zero bytes read back {back[:40]!r}'
            await workspace.write_bytes(emptied, b'contents before')
            await workspace.write_bytes(emptied, b'')
            back = await workspace.read_bytes(emptied)
            assert back == b'', f'a file rewritten with zero bytes still held {back[:40]!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_zero_byte_write_creates_the_file(self, backend: WorkspaceBackend) -> None:
        """A zero-byte write creates a regular file that `exists`, `stat` (size 0 or `None`) and `list_dir` see."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            folder = paths.join(root, 'folder')
            path = paths.join(folder, 'empty')
            await workspace.write_bytes(path, b'')
            assert await workspace.exists(path), 'exists() is False for a file just written with zero bytes'
            entry = await workspace.stat(path)
            observed = (entry.name, entry.is_dir, entry.size)
            assert not entry.is_dir and entry.size in (0, None), f'stat of a zero-byte file gave {observed!r}'
            listed = [(item.name, item.is_dir, item.size) for item in await workspace.list_dir(folder)]
            assert len(listed) == 1 and listed[0][:2] == ('empty', False) and listed[0][2] in (0, None), (
                f'list_dir of a directory holding one zero-byte file gave {listed!r}'
            )

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_shorter_overwrite_truncates(self, backend: WorkspaceBackend) -> None:
        """Overwriting a file with shorter content leaves exactly the new bytes, in data and in size."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'shrinks')
            await workspace.write_bytes(path, random.Random(7).randbytes(48 * 1024))
            await workspace.write_bytes(path, b'tiny')
            back = await workspace.read_bytes(path)
            assert back == b'tiny', (
                f'after overwriting 48 KiB with b"tiny" the file read {len(back)} bytes: {back[:40]!r}'
            )
            size = (await workspace.stat(path)).size
            assert size in (None, 4), f'after overwriting 48 KiB with 4 bytes stat gave size {size!r}'
            listed = [entry.size for entry in await workspace.list_dir(root)]
            assert listed in ([None], [4]), f'after overwriting 48 KiB with 4 bytes list_dir gave sizes {listed!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_line_endings_and_nul_bytes_are_preserved(self, backend: WorkspaceBackend) -> None:
        """File bytes are never translated: LF, CRLF, a lone CR and NUL bytes read back exactly as written."""
        workspace = workspace_of(backend)
        data = b'unix\nwindows\r\nold-mac\rmixed\n\r\n\r\x00nul\x00\x00inside\r\n\x00'
        async with scratch(workspace) as root:
            for name, payload in (
                ('mixed', data),
                ('crlf-only', b'\r\n' * 3),
                ('lone-cr', b'\r'),
                ('nul-byte', b'\x00'),
            ):
                path = paths.join(root, name)
                await workspace.write_bytes(path, payload)
                back = await workspace.read_bytes(path)
                assert back == payload, f'wrote {payload!r}, read back {back!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_invalid_utf8_bytes_are_preserved(self, backend: WorkspaceBackend) -> None:
        """Bytes that are not valid UTF-8 read back unchanged, never replaced, dropped or re-encoded."""
        workspace = workspace_of(backend)
        data = (
            b'valid \xc3\xa9 then \xff\xfe lone \x80 cut \xc3( surrogate \xed\xa0\x80 '
            b'big \xf4\x90\x80\x80 long \xc0\xaf end\xe2\x82'
        )
        async with scratch(workspace) as root:
            path = paths.join(root, 'not-utf8.bin')
            await workspace.write_bytes(path, data)
            back = await workspace.read_bytes(path)
            assert back == data, f'wrote {data!r}, read back {back!r}'
            size = (await workspace.stat(path)).size
            assert size in (None, len(data)), f'stat of a {len(data)}-byte file gave size {size!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_names_with_shell_metacharacters_round_trip(self, backend: WorkspaceBackend) -> None:
        """Names with spaces, quotes, `$`, globs, backslashes or a leading dash are kept exactly, uninterpreted.

        On a 'windows' workspace, those of the names Windows keeps as written (`strategies.windows_name`).
        """
        workspace = workspace_of(backend)
        names: tuple[str, ...] = SHELL_METACHARACTER_NAMES
        if current_platform() == 'windows':
            names = tuple(name for name in names if windows_name(name))
        async with scratch(workspace) as root:
            await _names_round_trip(workspace, root, names)

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33', platforms=['posix'])
    async def test_names_with_control_characters_round_trip(self, backend: WorkspaceBackend) -> None:
        """Names holding a tab, newline, carriage return or other control character are kept and listed exactly."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            await _names_round_trip(workspace, root, CONTROL_CHARACTER_NAMES)

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_unicode_names_are_kept_exactly(self, backend: WorkspaceBackend) -> None:
        """Non-ASCII names are kept code point for code point: NFC `café` and NFD `café` are two different files."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            await _names_round_trip(workspace, root, UNICODE_NAMES)

    @rule(area='files', level='extended', requires=['filesystem'], since='0.3.0', must='F23', platforms=['posix'])
    async def test_undecodable_name_bytes_round_trip(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        """A name whose bytes are not UTF-8 is listed and resolved surrogate-escaped, and that `str` opens the file.

        With commands the name is made by `sh`, as a program in the environment would make it; without, by
        `write_bytes`. Not applicable where the filesystem refuses such names (a command fails, or `EILSEQ`).
        """
        workspace = workspace_of(backend)
        shell = isinstance(backend, SupportsCommands) and has_real_posix_shell
        async with scratch(workspace) as root:
            path = paths.join(root, UNDECODABLE_NAME)
            first = await _make_undecodable_name(workspace, root, path, shell=shell)
            listed = [(entry.name, entry.path) for entry in await workspace.list_dir(root)]
            assert listed == [(UNDECODABLE_NAME, path)], (
                f'list_dir of a directory holding only the name {UNDECODABLE_BYTES!r} gave {listed!r}, '
                f'expected {[(UNDECODABLE_NAME, path)]!r}'
            )
            back = await workspace.read_bytes(path)
            assert back == first, f'read_bytes({path!r}) of the listed name gave {back!r}, expected {first!r}'
            await workspace.write_bytes(path, b'rewritten through its listed name')
            names = [entry.name for entry in await workspace.list_dir(root)]
            assert names == [UNDECODABLE_NAME], f'after write_bytes({path!r}) the directory listed {names!r}'
            if shell:
                seen = await workspace.run(['sh', '-c', f'cat -- "$1/$(printf \'{UNDECODABLE_OCTAL}\')"', 'sh', root])
                assert seen.stdout == 'rewritten through its listed name', (
                    f'after write_bytes({path!r}), `cat` of the name {UNDECODABLE_BYTES!r} printed {seen.stdout!r}'
                )
            real, real_root = await gather(workspace.realpath(path), workspace.realpath(root))
            expected = paths.join(real_root, UNDECODABLE_NAME)
            assert real == expected, f'realpath({path!r}) gave {real!r}, expected {expected!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B39')
    async def test_dotfiles_are_listed(self, backend: WorkspaceBackend) -> None:
        """`list_dir` lists every entry, including names that start with a dot, like `.env` and `...`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            await workspace.make_dir(paths.join(root, '.hidden-dir'))
            await _names_round_trip(workspace, root, ('.env', '..double-dot', '...', 'visible'), extra={'.hidden-dir'})

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B32')
    async def test_list_dir_returns_entries_under_the_directory(self, backend: WorkspaceBackend) -> None:
        """`list_dir` returns a sequence of `FileEntry` at the absolute paths `<dir>/<name>`, sizes exact or `None`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            sizes = {'three': 3, 'empty': 0, 'kibi': 1024}
            for name, size in sizes.items():
                await workspace.write_bytes(paths.join(root, name), b'x' * size)
            await workspace.make_dir(paths.join(root, 'sub'))
            listing = await workspace.list_dir(root)
            assert isinstance(listing, Sequence), f'list_dir returned a {type(listing).__name__}, not a Sequence'
            entries = list(listing)
            names = sorted(entry.name for entry in entries if isinstance(entry, FileEntry))
            assert names == sorted([*sizes, 'sub']), f'list_dir gave {entries!r}'
            for entry in entries:
                assert isinstance(entry, FileEntry), f'list_dir gave a {type(entry).__name__}: {entry!r}'
                expected_path = paths.join(root, entry.name)
                assert entry.path == expected_path, (
                    f'the entry {entry.name!r} has the path {entry.path!r}, not {expected_path!r}'
                )
                assert entry.is_dir is (entry.name == 'sub'), f'the entry {entry.name!r} has is_dir={entry.is_dir!r}'
                if not entry.is_dir:
                    assert entry.size in (None, sizes[entry.name]), (
                        f'the {sizes[entry.name]}-byte file {entry.name!r} is listed with size {entry.size!r}'
                    )

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_read_bytes_returns_bytes(self, backend: WorkspaceBackend) -> None:
        """`read_bytes` returns `bytes`, not a `bytearray`, `memoryview` or `str`, for empty and non-empty files."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            for name, data in (('text', b'some text\n'), ('empty', b'')):
                path = paths.join(root, name)
                await workspace.write_bytes(path, data)
                back = await workspace.read_bytes(path)
                assert isinstance(back, bytes), f'read_bytes returned a {type(back).__name__}: {back!r}'
                assert back == data, f'read_bytes returned {back!r}, expected {data!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B32')
    async def test_stat_returns_a_file_entry_with_exact_types(self, backend: WorkspaceBackend) -> None:
        """`stat` returns a `FileEntry`: `name` and `path` are `str`, `is_dir` a `bool`, `size` an `int` or `None`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file, folder = paths.join(root, 'five'), paths.join(root, 'folder')
            await workspace.write_bytes(file, b'12345')
            await workspace.make_dir(folder)
            for path, is_dir in ((file, False), (folder, True)):
                entry = await workspace.stat(path)
                assert isinstance(entry, FileEntry), f'stat({path!r}) returned a {type(entry).__name__}: {entry!r}'
                types = {field: type(getattr(entry, field)).__name__ for field in ('name', 'path', 'is_dir', 'size')}
                assert type(entry.name) is str and type(entry.path) is str, f'stat({path!r}) gave field types {types}'
                assert type(entry.is_dir) is bool, f'stat({path!r}) gave is_dir={entry.is_dir!r} ({types["is_dir"]})'
                assert entry.size is None or type(entry.size) is int, (
                    f'stat({path!r}) gave size={entry.size!r} ({types["size"]})'
                )
                assert entry.is_dir is is_dir, f'stat({path!r}) gave is_dir={entry.is_dir!r}'
            assert (await workspace.stat(file)).size in (None, 5), 'stat of a 5-byte file gave the wrong size'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B38')
    async def test_exists_below_a_regular_file_is_false(self, backend: WorkspaceBackend) -> None:
        """`exists` of a path below a regular file is `False`, not an error."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file = paths.join(root, 'file')
            await workspace.write_bytes(file, b'a file')
            for path in (paths.join(file, 'child'), paths.join(file, 'child', 'grandchild')):
                try:
                    answer = await workspace.exists(path)
                except Exception as error:
                    raise AssertionError(f'exists({path!r}) below a regular file raised {error!r}') from error
                assert answer is False, f'exists({path!r}) below a regular file returned {answer!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B38')
    async def test_exists_of_the_working_dir_is_true(self, backend: WorkspaceBackend) -> None:
        """`exists` is `True` for the working directory itself, however it is spelled."""
        workspace = workspace_of(backend)
        working_dir = await workspace.working_dir()
        for path in (working_dir, '.', f'{working_dir}/.'):
            answer = await workspace.exists(path)
            assert answer is True, f'exists({path!r}) of the working directory {working_dir!r} returned {answer!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_concurrent_writes_to_different_files_land_intact(self, backend: WorkspaceBackend) -> None:
        """Concurrent `write_bytes` calls to different files, in one directory and in a new one, all land intact."""
        workspace = workspace_of(backend)
        generator = random.Random(20260101)
        async with scratch(workspace) as root:
            payloads = {
                paths.join(root, *(('new-parent',) if index % 2 else ()), f'writer-{index}'): generator.randbytes(
                    997 * (index + 1)
                )
                for index in range(12)
            }
            async with anyio.create_task_group() as group:
                for path, data in payloads.items():
                    group.start_soon(workspace.write_bytes, path, data)
            for path, data in payloads.items():
                back = await workspace.read_bytes(path)
                assert back == data, (
                    f'{path} read back {len(back)} bytes, expected its own {len(data)}: a concurrent write clobbered it'
                )

    @rule(area='files', requires=['filesystem'], since='0.2.0', timeout=120, must='B39')
    async def test_large_listing_is_complete(self, backend: WorkspaceBackend, has_real_posix_shell: bool) -> None:
        """`list_dir` of a directory holding 2,000 entries returns every one of them, exactly once."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            names = entry_names(LARGE_LISTING_ENTRIES)
            # One command, not 2,000 file operations: the shell-derived filesystem pays several commands per write.
            await make_entries(backend, root, LARGE_LISTING_ENTRIES, has_real_posix_shell)
            listed = [entry.name for entry in await workspace.list_dir(root)]
            missing, extra = sorted(names - set(listed)), sorted(set(listed) - names)
            assert not missing and not extra and len(listed) == len(names), (
                f'list_dir of {len(names)} entries gave {len(listed)} ({len(set(listed))} distinct); '
                f'missing {len(missing)} (e.g. {missing[:3]}), unexpected {extra[:3]}'
            )

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B33')
    async def test_deep_nesting_works(self, backend: WorkspaceBackend) -> None:
        """Paths 40 directories deep can be written, read, listed, made and removed like shallow ones."""
        workspace = workspace_of(backend)
        levels = [f'level-{index:02d}' for index in range(DEEP_LEVELS)]
        async with scratch(workspace) as root:
            deep = paths.join(root, *levels)
            leaf = paths.join(deep, 'leaf.txt')
            await workspace.write_bytes(leaf, b'at the bottom')
            back = await workspace.read_bytes(leaf)
            assert back == b'at the bottom', f'a file {DEEP_LEVELS} levels deep read back {back!r}'
            listed = [(entry.name, entry.path) for entry in await workspace.list_dir(deep)]
            assert listed == [('leaf.txt', leaf)], f'list_dir {DEEP_LEVELS} levels deep gave {listed!r}'
            branch = paths.join(root, 'branch', *levels)
            await workspace.make_dir(branch)
            assert (await workspace.stat(branch)).is_dir, (
                f'make_dir of a path {DEEP_LEVELS} levels deep made no directory'
            )
            for top in (paths.join(root, levels[0]), paths.join(root, 'branch')):
                await workspace.remove(top)
                assert not await workspace.exists(top), f'removing a tree {DEEP_LEVELS} levels deep left {top}'
            assert not await workspace.exists(leaf), 'the deep file still exists after its tree was removed'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='F21')
    async def test_write_keeps_other_files_in_the_directory(self, backend: WorkspaceBackend) -> None:
        """Writing one file, new or existing, leaves every other entry of its directory as it was."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            siblings = {'first': b'first', 'second': b'second', 'sub/inner': b'inner'}
            for name, data in siblings.items():
                await workspace.write_bytes(paths.join(root, name), data)
            await workspace.write_bytes(paths.join(root, 'first'), b'rewritten')
            await workspace.write_bytes(paths.join(root, 'added'), b'added')
            names = sorted(entry.name for entry in await workspace.list_dir(root))
            assert names == ['added', 'first', 'second', 'sub'], f'after two writes the directory held {names!r}'
            for name, data in (('second', b'second'), ('sub/inner', b'inner'), ('first', b'rewritten')):
                back = await workspace.read_bytes(paths.join(root, name))
                assert back == data, f'after writing its siblings, {name} held {back!r}, expected {data!r}'

    @rule(area='files', requires=['commands', 'posix_shell', 'shell_files'], since='0.3.0', must='F21')
    async def test_a_shell_derived_overwrite_keeps_the_file_mode(self, backend: WorkspaceBackend) -> None:
        """Rewriting a file through the shell-derived filesystem keeps its mode bits (a script stays executable)."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'tool.sh')
            await workspace.write_bytes(path, b'#!/bin/sh\necho one\n')
            listed = ['sh', '-c', 'chmod 751 "$1" && ls -ln "$1"', 'sh', path]
            before = await commands_of(backend).run(listed)
            if before.exit_code != 0 or not before.stdout.startswith(MODE_751):
                skip(
                    'environment',
                    f'the scratch directory keeps no mode set by `chmod 751` (exit {before.exit_code}, `ls -ln` said '
                    f'{before.stdout[:120]!r} {before.stderr[:120]!r}), so there is no mode for a rewrite to keep',
                )
            await workspace.write_bytes(path, b'#!/bin/sh\necho two\n')
            after = await commands_of(backend).run(['ls', '-ln', path])
            mode = after.stdout[: len(MODE_751)]  # SELinux and ACLs add a '.' or '+' after the ten characters
            assert after.exit_code == 0 and mode == MODE_751, (
                f'a file of mode {MODE_751} read {mode!r} after write_bytes rewrote it (exit {after.exit_code}, '
                f'`ls -ln` said {after.stdout[:120]!r}): the staged copy replaced it with a default mode'
            )

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B39')
    async def test_list_dir_of_an_empty_directory_is_empty(self, backend: WorkspaceBackend) -> None:
        """`list_dir` of an existing empty directory returns an empty sequence, not an error."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            empty = paths.join(root, 'parent', 'empty')
            for path in (root, empty):  # the scratch directory just made, then one made by make_dir
                await workspace.make_dir(path)
                listing = await workspace.list_dir(path)
                assert isinstance(listing, Sequence), f'list_dir returned a {type(listing).__name__}, not a Sequence'
                assert len(listing) == 0, f'list_dir of the empty directory {path!r} gave {list(listing)!r}'

    @rule(area='files', requires=['filesystem'], since='0.2.0')
    async def test_reading_after_remove_raises_file_not_found(self, backend: WorkspaceBackend) -> None:
        """After `remove`, reading or stating the file raises `FileNotFoundError` and `exists` is `False`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'doomed')
            await workspace.write_bytes(path, b'read once')
            assert await workspace.read_bytes(path) == b'read once', 'the file did not read back before its removal'
            await workspace.stat(path)
            await workspace.remove(path)
            with expect_error(FileNotFoundError, f'read_bytes({path!r}) after remove'):
                await workspace.read_bytes(path)
            with expect_error(FileNotFoundError, f'stat({path!r}) after remove'):
                await workspace.stat(path)
            assert await workspace.exists(path) is False, f'exists({path!r}) after remove was not False'

    @rule(area='files', requires=['filesystem'], since='0.2.0', must='B36')
    async def test_removing_a_file_leaves_its_parent(self, backend: WorkspaceBackend) -> None:
        """Removing the only file of a directory leaves that directory in place, empty."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            folder = paths.join(root, 'outer', 'folder')
            path = paths.join(folder, 'only')
            await workspace.write_bytes(path, b'the only file')
            await workspace.remove(path)
            for directory in (folder, paths.dirname(folder)):
                assert await workspace.exists(directory), f'removing {path} also removed its ancestor {directory}'
            listed = [entry.name for entry in await workspace.list_dir(folder)]
            assert listed == [], f'after removing its only file the directory listed {listed!r}'


async def _make_undecodable_name(workspace: Workspace, root: str, path: str, *, shell: bool) -> bytes:
    """Create the file `path` (named `UNDECODABLE_BYTES` in `root`) by `sh` or by `write_bytes`; its contents."""
    if shell:
        script = f'printf made-by-sh > "$1/$(printf \'{UNDECODABLE_OCTAL}\')"'
        made = await workspace.run(['sh', '-c', script, 'sh', root])
        if made.exit_code != 0:
            skip(
                'not-applicable', f'the filesystem refuses the name {UNDECODABLE_BYTES!r}: {made.stderr.strip()[:200]}'
            )
        return b'made-by-sh'
    try:
        await workspace.write_bytes(path, b'made-by-write')
    except OSError as error:
        if error.errno != errno.EILSEQ:
            raise
        skip('not-applicable', f'the filesystem refuses the name {UNDECODABLE_BYTES!r} (EILSEQ)')
    return b'made-by-write'


async def _names_round_trip(
    workspace: Workspace, root: str, names: Sequence[str], *, extra: set[str] | frozenset[str] = frozenset()
) -> None:
    """Write a file per name, then require `list_dir`, `stat` and `read_bytes` to give back each name exactly.

    The writes go at once, then the stats and reads at once: independent calls, one round trip each batch.
    """
    await gather(*(workspace.write_bytes(paths.join(root, name), f'<{name}>'.encode()) for name in names))
    listed = sorted(entry.name for entry in await workspace.list_dir(root))
    expected = sorted({*names, *extra})
    assert listed == expected, f'list_dir gave the names {listed!r}, expected {expected!r}'
    files = [paths.join(root, name) for name in names]
    seen = await gather(*(gather(workspace.stat(path), workspace.read_bytes(path)) for path in files))
    for name, path, (entry, back) in zip(names, files, seen, strict=True):
        data = f'<{name}>'.encode()
        observed = (entry.name, entry.path, entry.is_dir)
        assert observed == (name, path, False), f'stat({path!r}) gave {observed!r}'
        assert entry.size in (None, len(data)), f'stat({path!r}) of a {len(data)}-byte file gave size {entry.size!r}'
        assert back == data, f'read_bytes({path!r}) gave {back!r}, expected {data!r}'
