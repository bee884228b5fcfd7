"""What isolation rules stand on: the claims, and the host canaries planted before a rule and removed after it.

Every canary carries a fresh random token. The fixture that hands them out removes them in its `finally`, so they go
on a pass, a failure, a hang guard's cancellation and an interrupted session alike. Because the backend under test
may not isolate at all, a canary is only ever something the suite can lose: a file it made, a process it started (that
also ends by itself when the runner does), a variable it set, or a listener on 127.0.0.1 or in the host's temp
directory that accepts a bounded number of connections and closes them at once.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from pydantic_ai.workspaces import CommandResult, Workspace, WorkspaceBackend

from ..authoring import (
    ISOLATION_AREAS,
    NO_ISOLATION_CLAIMED,
    ConformanceConfigError,
    SuiteFixtures,
    commands_of,
    current_run,
    machinery_hidden,
    skip,
)

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'CANARY_PREFIX',
    'NO_CLAIMS',
    'FileCanary',
    'HostCanaries',
    'HostProcess',
    'IsolationFixtures',
    'Listener',
    'attempts',
    'checked_claims',
    'host_directory',
    'in_sandbox',
)

CANARY_PREFIX = 'wcs-isolation-'
"""Every file, socket, process marker and variable value the suite plants starts with this."""
NO_CLAIMS = NO_ISOLATION_CLAIMED
"""What the report says of a backend whose `isolation_claims` is empty, instead of a pass."""
CONNECTIONS = 8
"""Connections a listener accepts before it stops listening."""
UNIX_PATH_MAX = 108
"""Bytes in a unix socket address's path on Linux, its final NUL included."""
SLEEPER = (
    'import os, sys, time\n'
    'parent = os.getppid()\n'
    'for _ in range(int(sys.argv[1]) * 5):\n'
    '    if os.getppid() != parent:\n'
    '        break\n'
    '    time.sleep(0.2)\n'
)
"""The host process canary: sleeps, and ends by itself when the runner ends or after its lifetime (argv[1] s)."""


def checked_claims(claims: Collection[str]) -> frozenset[str]:
    """The claims as a set, or a one-line `ConformanceConfigError` naming the unknown ones and the allowed ones."""
    allowed = ', '.join(ISOLATION_AREAS)
    if isinstance(claims, str):
        raise ConformanceConfigError(f'`isolation_claims` must be a set of claim names, not the string {claims!r}')
    unknown = sorted(str(claim) for claim in set(claims) - set(ISOLATION_AREAS))
    if unknown:
        raise ConformanceConfigError(f'`isolation_claims` names unknown claims {unknown}: the claims are {allowed}')
    return frozenset(claims)


def _token() -> str:
    return secrets.token_hex(8)


def _owned_name(kind: str = '') -> str:
    """A canary's name: the prefix, the runner's pid (whose leftovers they would be) and a fresh token."""
    return f'{CANARY_PREFIX}{kind}{os.getpid()}-{_token()}'


@dataclass(frozen=True)
class FileCanary:
    """A file planted on the host, and the secret only it holds."""

    path: Path
    secret: str

    @property
    def content(self) -> str:
        return f'isolation canary {self.secret}\n'


@dataclass(frozen=True)
class HostProcess:
    """A process started on the host with `marker` in its argv."""

    process: subprocess.Popen[bytes]
    marker: str

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        """Whether it still runs (an ended one is reaped here)."""
        return self.process.poll() is None

    async def ends_within(self, seconds: float) -> bool:
        """Whether it ends within `seconds` (scaled by the rule's time scale)."""
        with anyio.move_on_after(current_run().seconds(seconds)):
            while self.alive():
                await anyio.sleep(0.05)
            return True
        return False


class Listener:
    """A socket listening on the host, served by a thread that accepts at most `CONNECTIONS` and closes each at once."""

    def __init__(self, server: socket.socket, address: str) -> None:
        self.address = address
        self._server = server
        self._accepted = 0
        self._stop = threading.Event()
        server.settimeout(0.1)
        self._thread = threading.Thread(target=self._serve, name=f'isolation listener {address}', daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set() and self._accepted < CONNECTIONS:
            try:
                connection, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._accepted += 1
            connection.close()

    def connections(self) -> int:
        """Connections seen so far: the thread stops, and any still waiting in the backlog are accepted and counted."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._server.setblocking(False)
        with contextlib.suppress(OSError):
            while self._accepted < CONNECTIONS:
                connection, _ = self._server.accept()
                self._accepted += 1
                connection.close()
        return self._accepted

    def close(self) -> None:
        """Stop serving and close the socket."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._server.close()


class HostCanaries:
    """The canaries of one rule, planted on demand once the rule's claim is checked, removed by `close`."""

    def __init__(self, claims: frozenset[str]) -> None:
        self.claims = claims
        self._cleanups: list[Callable[[], None]] = []

    def check_claim(self) -> None:
        """Skip the running rule as not applicable unless the backend claims its area."""
        area = current_run().rule.area
        if not self.claims:
            skip('not-applicable', f'{NO_CLAIMS}: `isolation_claims` is empty')
        if area not in self.claims:
            skip('not-applicable', f'the backend does not claim {area!r} isolation (it claims {sorted(self.claims)})')

    def _on_close(self, cleanup: Callable[[], None]) -> None:
        self._cleanups.append(cleanup)

    def _file(self, path: Path) -> FileCanary:
        canary = FileCanary(path, _token())
        self._on_close(lambda: path.unlink(missing_ok=True))
        path.write_text(canary.content)
        return canary

    def temp_file(self) -> FileCanary:
        """A file in the host's temporary directory."""
        self.check_claim()
        return self._file(Path(tempfile.gettempdir()) / _owned_name())

    def file_beside(self, directory: Path) -> FileCanary:
        """A file in the parent of the workspace's host directory, next to the workspace."""
        self.check_claim()
        return self._file(directory.parent / _owned_name('beside-'))

    def process(self, lifetime: float = 300) -> HostProcess:
        """A host process with a marker in its argv, killed and reaped on close (and ending by itself at worst)."""
        self.check_claim()
        marker = f'{CANARY_PREFIX}process-{_token()}'
        started = subprocess.Popen(
            [sys.executable, '-c', SLEEPER, str(int(lifetime)), marker],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def end() -> None:
            if started.poll() is None:
                started.kill()
            started.wait(timeout=10)

        self._on_close(end)
        return HostProcess(started, marker)

    def variable(self) -> tuple[str, str]:
        """A variable with a unique name and value, set in the runner's `os.environ` until close."""
        self.check_claim()
        name = f'WCS_ISOLATION_{_token().upper()}'
        value = f'{CANARY_PREFIX}{_token()}'
        os.environ[name] = value

        def restore() -> None:
            os.environ.pop(name, None)

        self._on_close(restore)
        return name, value

    def tcp_listener(self) -> Listener:
        """A TCP listener on the host's 127.0.0.1 on a port the kernel picks."""
        self.check_claim()
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._on_close(server.close)
        server.bind(('127.0.0.1', 0))
        server.listen(CONNECTIONS)
        listener = Listener(server, f'127.0.0.1:{server.getsockname()[1]}')
        self._on_close(listener.close)
        return listener

    def unix_listener(self) -> Listener:
        """A unix socket listener in the host's temporary directory (`/tmp` when that path is too long for one)."""
        self.check_claim()
        path = Path(tempfile.gettempdir()) / f'{_owned_name()}.sock'
        if len(os.fsencode(path)) >= UNIX_PATH_MAX:  # no client could name it either: the rule would prove nothing
            path = Path('/tmp') / path.name
        if len(os.fsencode(path)) >= UNIX_PATH_MAX or not path.parent.is_dir():
            skip('environment', f'no host temporary directory with a path short enough for a unix socket: {path}')
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._on_close(lambda: path.unlink(missing_ok=True))
        self._on_close(server.close)
        server.bind(str(path))
        server.listen(CONNECTIONS)
        listener = Listener(server, str(path))
        self._on_close(listener.close)
        return listener

    def close(self) -> list[str]:
        """Remove every canary, newest first; what could not be removed, one line each."""
        problems = []
        while self._cleanups:
            cleanup = self._cleanups.pop()
            try:
                cleanup()
            except Exception as error:
                problems.append(f'{type(error).__name__}: {error}')
        return problems


async def in_sandbox(backend: WorkspaceBackend, script: str) -> CommandResult:
    """Run a shell script with the backend's commands, bounded by the rule's guard (scaled 30 s)."""
    return await commands_of(backend).run(script, shell=True, timeout=current_run().seconds(30))


async def host_directory(backend: WorkspaceBackend) -> Path | None:
    """The host directory that is the workspace's working directory, when a file written there shows up on the host."""
    working_dir = Path(await Workspace(backend).working_dir())
    name = f'.{CANARY_PREFIX}probe-{_token()}'
    token = _token()
    on_host = working_dir / name
    try:
        await in_sandbox(backend, f"printf %s {token} > '{name}'")
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if on_host.is_file() and on_host.read_text() == token:
                return working_dir
        return None
    finally:
        await in_sandbox(backend, f"rm -f '{name}'")
        on_host.unlink(missing_ok=True)


def attempts(result: CommandResult) -> tuple[list[str], list[str]]:
    """The client tools an `attempt` script tried, and those that said they connected."""
    lines = result.stdout.splitlines()
    tried = [line.removeprefix('tried ') for line in lines if line.startswith('tried ')]
    connected = [line.removeprefix('connected ') for line in lines if line.startswith('connected ')]
    return tried, connected


ATTEMPT = (
    'has() { command -v "$1" >/dev/null 2>&1; }\n'
    'attempt() { name=$1; shift; echo "tried $name"; '
    'if "$@" </dev/null >/dev/null 2>&1; then echo "connected $name"; fi; }\n'
    'applet() { has busybox && busybox --list 2>/dev/null | grep -qx "$1"; }\n'
)
"""Shell helpers of the connection scripts: `attempt NAME argv...` says `tried NAME`, and `connected NAME` on exit 0."""


class IsolationFixtures(SuiteFixtures):
    """The fixtures of `WorkspaceIsolationSuite`: `backend` and `isolation_claims` are required."""

    @pytest.fixture
    def backend(self) -> WorkspaceBackend:
        """The sandbox under test: override it in your subclass (sync or async, generator or not, any scope)."""
        raise NotImplementedError(
            'WorkspaceIsolationSuite needs a `backend` fixture: define `@pytest.fixture def backend(self): return '
            'MySandbox(...)` in your subclass.'
        )

    @pytest.fixture
    def isolation_claims(self) -> Collection[str]:
        """What the backend claims to keep from the host: a set drawn from files, processes, environment, network."""
        raise NotImplementedError(
            'WorkspaceIsolationSuite needs an `isolation_claims` fixture: return a set drawn from '
            f'{set(ISOLATION_AREAS)} (an empty set if the backend claims no isolation).'
        )

    @pytest.fixture
    def host_canaries(self, isolation_claims: Collection[str]) -> Iterator[HostCanaries]:
        """The rule's host canaries, each removed when the rule ends, however it ends."""
        canaries = HostCanaries(checked_claims(isolation_claims))
        try:
            yield canaries
        finally:
            problems = canaries.close()
            if problems:
                raise AssertionError(f'removing the host canaries failed: {"; ".join(problems)}')
