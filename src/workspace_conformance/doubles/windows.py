r"""`WindowsMemoryBackend`: a 'windows' workspace in memory, with Windows path rules, for testing platform logic here.

It declares `workspace_platform == 'windows'` (pydantic-ai >= 2.78) and keeps the rules of Windows paths that a POSIX
machine does not: a drive letter (`C:\work`), backslashes (forward slashes accepted, as Windows accepts them),
names that compare without case but keep the case they were written with, and names Windows refuses (`<>:"|?*`,
control characters, `CON`, `NUL`, ...; trailing dots and spaces dropped, as Win32 drops them). Files live in an
`InMemoryBackend` underneath.

Its commands are a script, not Windows: an argv whose program is a POSIX one (`sh`, `printf`, `ln`, ...) is recorded
in `posix_commands` and exits 127 as Windows' "is not recognized" does; `cmd /c exit N`, `cmd /d /c cd`, the
suite's PowerShell baseline and its three PowerShell forms (the start directory; `$env:WC_ADDED`, both streams and
exit 3; an hour's `Start-Sleep`, which only a `timeout` ends) are answered as Windows answers them; any other
program exits 127, and any other PowerShell script exits 1 saying it is not scripted. `WindowsMemoryCore` is the
same backend without `run_in_directory`, which a 'windows' backend must implement.
"""

from __future__ import annotations

import errno
import ntpath
from collections.abc import Mapping, Sequence

import anyio
from pydantic_ai.workspaces import CommandResult, FileEntry, WorkspaceCommand, WorkspaceRef, WorkspaceTimeoutError
from pydantic_ai.workspaces.protocol import validate_timeout

from .._platforms import (
    BASELINE_ENV_MARK,
    BASELINE_POWERSHELL,
    POWERSHELL_LOCATION,
    POWERSHELL_REPORT,
    POWERSHELL_SLEEP,
    posix_program,
)
from .memory import InMemoryBackend

__all__ = ('WINDOWS_ENV', 'WindowsMemoryBackend', 'WindowsMemoryCore')

WINDOWS_ENV = {'SYSTEMROOT': 'C:\\Windows', 'PATH': 'C:\\Windows\\system32;C:\\Windows', 'PATHEXT': '.COM;.EXE;.BAT'}
"""The environment every command of the double sees, under the `env` a call adds."""
_REFUSED_CHARACTERS = frozenset('<>:"|?*') | frozenset(chr(code) for code in range(32))
_RESERVED = frozenset(
    {'con', 'prn', 'aux', 'nul', *(f'com{n}' for n in range(1, 10)), *(f'lpt{n}' for n in range(1, 10))}
)
_NOT_RECOGNIZED = (
    "'{program}' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n"
)


def _refused(path: str) -> OSError:
    return OSError(errno.EINVAL, 'The filename, directory name, or volume label syntax is incorrect', path)


class WindowsMemoryCore:
    """A 'windows' workspace in memory: Windows paths over an `InMemoryBackend`, scripted commands, no `cwd` form."""

    def __init__(
        self,
        *,
        working_dir: str = 'C:\\Users\\agent\\work',
        env: Mapping[str, str] | None = None,
        ref: WorkspaceRef | None = None,
    ) -> None:
        drive, rest = ntpath.splitdrive(working_dir)
        if not drive or ntpath.normpath(working_dir) != working_dir or not rest.startswith('\\'):
            raise ValueError(f'working_dir must be an absolute, normalized Windows path, got {working_dir!r}')
        self._drive = drive.upper()
        self._names: dict[str, str] = {}
        """Internal (case-folded) path -> the name as it was first written, for listings and results."""
        self._working_dir = working_dir
        self.inner = InMemoryBackend(working_dir=self._internal(working_dir, remember=True), ref=ref)
        self._env = {**WINDOWS_ENV, **(env or {})}
        self.commands: list[tuple[WorkspaceCommand, str]] = []
        """Every command the double was asked to run, with the directory it was to start in."""
        self.posix_commands: list[WorkspaceCommand] = []
        """The commands that named a POSIX program, which a 'windows' workspace has not."""

    @property
    def workspace_platform(self) -> str:
        """'windows': `shell=True` is PowerShell and paths are Windows paths."""
        return 'windows'

    @property
    def ref(self) -> WorkspaceRef | None:
        """The inner environment's ref: `None` until the first operation."""
        return self.inner.ref

    async def working_dir(self) -> str:
        r"""The working directory, a Windows path (`C:\Users\agent\work` by default)."""
        await self.inner.working_dir()
        return self._working_dir

    def _internal(self, path: str, *, remember: bool = False) -> str:
        """The inner backend's POSIX path for a Windows `path`; names Windows refuses raise `OSError(EINVAL)`."""
        if not isinstance(path, str):
            raise TypeError(f'a path is a str, not {type(path).__name__}')
        drive, rest = ntpath.splitdrive(ntpath.normpath(path))
        if drive.upper() != self._drive or not rest.startswith('\\'):
            raise FileNotFoundError(errno.ENOENT, f'not an absolute path on drive {self._drive}', path)
        internal = ''
        for written in (part for part in rest.split('\\') if part):
            name = written.rstrip(' .') or written
            if set(name) & _REFUSED_CHARACTERS or name.split('.')[0].casefold() in _RESERVED:
                raise _refused(path)
            internal = f'{internal}/{name.casefold()}'
            if remember:
                self._names.setdefault(internal, name)
        return internal or '/'

    def _windows(self, internal: str) -> str:
        """The Windows path of an inner path, each name spelled as it was first written."""
        parts = [part for part in internal.split('/') if part]
        spelled, prefix = [], ''
        for part in parts:
            prefix = f'{prefix}/{part}'
            spelled.append(self._names.get(prefix, part))
        return f'{self._drive}\\' + '\\'.join(spelled)

    def _entry(self, entry: FileEntry) -> FileEntry:
        path = self._windows(entry.path)
        return FileEntry(name=ntpath.basename(path), path=path, is_dir=entry.is_dir, size=entry.size)

    async def read_bytes(self, path: str) -> bytes:
        """The file's bytes."""
        return await self.inner.read_bytes(self._internal(path))

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Write a file, creating its parents; a name keeps the case it was first written with."""
        internal = self._internal(path)
        if not await self.inner.exists(internal):
            self._forget(internal)
        self._internal(path, remember=True)
        await self.inner.write_bytes(internal, data)

    async def stat(self, path: str) -> FileEntry:
        """The entry of a file or directory, its path a Windows path."""
        return self._entry(await self.inner.stat(self._internal(path)))

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        """The entries of a directory, each name as it was written."""
        return [self._entry(entry) for entry in await self.inner.list_dir(self._internal(path))]

    async def make_dir(self, path: str) -> None:
        """Make a directory and its parents."""
        internal = self._internal(path)
        if not await self.inner.exists(internal):
            self._forget(internal)
        self._internal(path, remember=True)
        await self.inner.make_dir(internal)

    async def remove(self, path: str) -> None:
        """Remove a file or a tree; the working directory and its ancestors are refused with `ValueError`."""
        internal = self._internal(path)
        await self.inner.remove(internal)
        self._forget(internal)

    async def exists(self, path: str) -> bool:
        """Whether something is at `path` (a name Windows refuses is never there)."""
        try:
            internal = self._internal(path)
        except OSError:
            return False
        return await self.inner.exists(internal)

    async def realpath(self, path: str) -> str:
        """The path normalized, each existing name spelled as it was written, a missing one as `path` has it."""
        resolved = ntpath.normpath(path)
        await self.inner.realpath(self._internal(resolved))  # this storage holds no links: only the checks
        rest = ntpath.splitdrive(resolved)[1]
        spelled, prefix = [], ''
        for written in (part for part in rest.split('\\') if part):
            prefix = f'{prefix}/{written.rstrip(" .").casefold()}'
            spelled.append(self._names.get(prefix, written))
        return f'{self._drive}\\' + '\\'.join(spelled)

    def _forget(self, internal: str) -> None:
        for known in [known for known in self._names if known == internal or known.startswith(f'{internal}/')]:
            del self._names[known]

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """Answer `command` from the script, started in the working directory."""
        return await self._answer(command, await self.working_dir(), shell=shell, env=env, timeout=timeout)

    async def _answer(
        self, command: WorkspaceCommand, cwd: str, *, shell: bool, env: Mapping[str, str] | None, timeout: float | None
    ) -> CommandResult:
        if isinstance(command, str) != shell:
            raise TypeError('a string command requires shell=True, and an argv sequence shell=False')
        validate_timeout(timeout)
        await self.inner.working_dir()  # creates the environment, or raises if it is gone
        self.commands.append((command, cwd))
        variables = {**self._env, **(env or {})}
        if isinstance(command, str):
            if command == BASELINE_POWERSHELL:
                listing = ''.join(f'{name}={value}\n' for name, value in variables.items())
                return CommandResult(exit_code=0, stdout=f'{BASELINE_ENV_MARK}\n{listing}', stderr='')
            if command == POWERSHELL_LOCATION:
                return CommandResult(exit_code=0, stdout=f'{cwd}\n', stderr='')
            if command == POWERSHELL_REPORT:
                return CommandResult(exit_code=3, stdout=f'{variables.get("WC_ADDED", "")}|{cwd}', stderr='to-err')
            if command == POWERSHELL_SLEEP:
                await anyio.sleep(3600 if timeout is None else min(timeout, 3600))
                raise WorkspaceTimeoutError(f'the command ran past its timeout of {timeout} s')
            return CommandResult(exit_code=1, stdout='', stderr=f'not scripted in this double: {command[:200]}\n')
        argv = list(command)
        if not argv:
            raise ValueError('command must not be empty')
        program = ntpath.basename(argv[0]).casefold().removesuffix('.exe')
        if posix_program(argv[0]):
            self.posix_commands.append(command)
        elif program == 'cmd' and [item.casefold() for item in argv[1:]] in (['/d', '/c', 'cd'], ['/c', 'cd']):
            return CommandResult(exit_code=0, stdout=f'{cwd}\r\n', stderr='')
        elif program == 'cmd' and len(argv) == 4 and argv[1].casefold() == '/c' and argv[2].casefold() == 'exit':
            return CommandResult(exit_code=int(argv[3]) & 0xFF if argv[3].isdigit() else 1, stdout='', stderr='')
        return CommandResult(exit_code=127, stdout='', stderr=_NOT_RECOGNIZED.format(program=argv[0]))


class WindowsMemoryBackend(WindowsMemoryCore):
    """`WindowsMemoryCore` with `run_in_directory`, as pydantic-ai asks of every 'windows' backend."""

    async def run_in_directory(
        self,
        command: WorkspaceCommand,
        *,
        cwd: str,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """Answer `command` from the script, started in `cwd` (a directory the facade resolved and checked)."""
        return await self._answer(command, cwd, shell=shell, env=env, timeout=timeout)
