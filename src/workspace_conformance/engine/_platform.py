"""The platform of the workspace a rule checks ('posix' or 'windows'), read once per rule, and its path functions.

pydantic-ai 2.78 lets a backend say it is a 'windows' workspace (`SupportsPlatform`): `shell=True` runs PowerShell and
paths are Windows paths. Before 2.78 every workspace is 'posix'. The guard reads the platform once, before the rule's
requirements are resolved; `paths` then gives the rule `ntpath` or `posixpath` for it, as `Workspace.paths` does.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import TypeVar

from pydantic_ai.workspaces import Workspace

from .._frames import machinery_hidden
from .._platforms import POSIX_PROGRAMS, POWERSHELL_LOCATION, POWERSHELL_REPORT, POWERSHELL_SLEEP, posix_program
from ..vocabulary import Platform

Form = TypeVar('Form')
__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'EXIT_0_ARGV',
    'PLATFORM',
    'POSIX_PROGRAMS',
    'PWD_ARGV',
    'PWD_SCRIPT',
    'REPORT_COMMAND',
    'SLEEP_COMMAND',
    'Paths',
    'current_platform',
    'lines',
    'paths',
    'platform_argv',
    'platform_form',
    'platform_of',
    'posix_program',
    'using_platform',
)

PLATFORM: ContextVar[Platform] = ContextVar('workspace_conformance_platform', default='posix')
"""The running rule's platform: the guard sets it once the rule starts and resets it when the rule ends."""


def platform_of(subject: object) -> Platform:
    """The platform `subject` (a backend or a `Workspace`) declares: 'posix' unless it says 'windows' (slim >= 2.78).

    A declaration that raises or is neither name reads as 'posix', the default; the platform rules judge it.
    """
    workspace = subject if isinstance(subject, Workspace) else Workspace(subject)  # type: ignore[arg-type]
    try:
        declared = getattr(workspace, 'platform', 'posix')
    except Exception:
        return 'posix'
    return 'windows' if declared == 'windows' else 'posix'


PWD_ARGV: dict[Platform, tuple[str, ...]] = {'posix': ('sh', '-c', 'pwd -P'), 'windows': ('cmd', '/d', '/c', 'cd')}
"""The argv that prints the directory a command starts in, symlinks resolved, then a newline, on each platform."""
EXIT_0_ARGV: dict[Platform, tuple[str, ...]] = {'posix': ('sh', '-c', 'exit 0'), 'windows': ('cmd', '/c', 'exit 0')}
"""An argv that does nothing and exits 0, on each platform."""


def platform_argv(forms: dict[Platform, tuple[str, ...]]) -> list[str]:
    """The running rule's platform's form of a command (`PWD_ARGV`, `EXIT_0_ARGV`), as a list."""
    return list(forms[PLATFORM.get()])


PWD_SCRIPT: dict[Platform, str] = {'posix': 'pwd -P', 'windows': POWERSHELL_LOCATION}
"""A `shell=True` script printing the directory it starts in, then a newline: sh's `pwd -P`, or PowerShell."""
REPORT_COMMAND: dict[Platform, tuple[tuple[str, ...] | str, bool]] = {
    'posix': (('sh', '-c', 'printf "%s|%s" "$WC_ADDED" "$(pwd -P)"; printf to-err >&2; exit 3'), False),
    'windows': (POWERSHELL_REPORT, True),
}
"""`(command, shell)` printing `$WC_ADDED|<start directory>` to stdout and `to-err` to stderr, then exiting 3."""
SLEEP_COMMAND: dict[Platform, tuple[tuple[str, ...] | str, bool]] = {
    'posix': (('sh', '-c', 'sleep 3600'), False),
    'windows': (POWERSHELL_SLEEP, True),
}
"""`(command, shell)` that runs for an hour, so only a `timeout` ends it sooner."""


def platform_form(forms: dict[Platform, Form]) -> Form:
    """The running rule's platform's form of anything keyed by platform (`PWD_SCRIPT`, `REPORT_COMMAND`, ...)."""
    return forms[PLATFORM.get()]


def lines(output: str) -> str:
    """Command output with Windows line ends (CR LF) read as POSIX ones (LF), so one expectation holds on both."""
    return output.replace('\r\n', '\n')


def current_platform() -> Platform:
    """The platform of the workspace the running rule checks ('posix' outside a rule)."""
    return PLATFORM.get()


@contextmanager
def using_platform(platform: Platform) -> Iterator[None]:
    """Within the block, `paths` and `current_platform` answer for `platform`; restored afterwards."""
    token = PLATFORM.set(platform)
    try:
        yield
    finally:
        PLATFORM.reset(token)


class Paths:
    """The path functions of the running rule's workspace: `ntpath` on a 'windows' workspace, else `posixpath`."""

    @property
    def module(self) -> ModuleType:
        """`ntpath` or `posixpath`, the module `Workspace.paths` is for this platform."""
        return ntpath if PLATFORM.get() == 'windows' else posixpath

    @property
    def sep(self) -> str:
        """The separator: a backslash on a 'windows' workspace, else `/`."""
        return '\\' if PLATFORM.get() == 'windows' else '/'

    def join(self, first: str, *rest: str) -> str:
        """`os.path.join` of the workspace's platform."""
        joined: str = self.module.join(first, *rest)
        return joined

    def dirname(self, path: str) -> str:
        """`os.path.dirname` of the workspace's platform."""
        found: str = self.module.dirname(path)
        return found

    def basename(self, path: str) -> str:
        """`os.path.basename` of the workspace's platform."""
        found: str = self.module.basename(path)
        return found

    def isabs(self, path: str) -> bool:
        """`os.path.isabs` of the workspace's platform (a Windows path is absolute with a drive and a root)."""
        if PLATFORM.get() == 'windows':
            drive, rest = ntpath.splitdrive(path)
            return bool(drive) and rest[:1] in ('\\', '/')
        return posixpath.isabs(path)

    def normpath(self, path: str) -> str:
        """`os.path.normpath` of the workspace's platform."""
        found: str = self.module.normpath(path)
        return found

    def normcase(self, path: str) -> str:
        """`os.path.normcase` of the workspace's platform: Windows names compare without case."""
        found: str = self.module.normcase(path)
        return found

    def relpath(self, path: str, start: str) -> str:
        """`os.path.relpath` of the workspace's platform."""
        found: str = self.module.relpath(path, start)
        return found

    def splitdrive(self, path: str) -> tuple[str, str]:
        """`os.path.splitdrive` of the workspace's platform."""
        found: tuple[str, str] = self.module.splitdrive(path)
        return found


paths = Paths()
"""The path functions rules build paths with: what `workspace.paths` is, on every pydantic-ai the suite supports."""
