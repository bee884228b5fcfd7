"""The hostile gallery: backends that each attack the harness one way, on a real local directory otherwise.

Each factory takes the certification's run directory (a `pathlib.Path` the harness removes afterwards) and
returns a backend whose every operation, but the hostile one, is `LocalWorkspaceBackend`'s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    LocalWorkspaceBackend,
    WorkspaceRef,
    WorkspaceUnavailableError,
)

from tests.mutants.gallery._shared import RewritesResults

MARKER = 'WORKSPACE_CONFORMANCE_HOSTILE_MARKER'
"""An environment variable the gallery sets to a token unique to one certification; every process inherits it."""

OPERATIONS = (
    *('working_dir', 'run', 'read_bytes', 'write_bytes', 'stat'),
    *('list_dir', 'make_dir', 'remove', 'exists', 'realpath'),
)
FILE_OPERATIONS = ('read_bytes', 'write_bytes', 'stat', 'list_dir', 'make_dir', 'remove', 'exists')
FLOOD = 100 * 1024 * 1024
"""How many characters `FloodsOutput` prints: 100 MiB."""
CREATION_SECONDS = 30.0


def _directory(run_dir: Path, name: str) -> Path:
    path = run_dir / name
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


def _replacing(names: Sequence[str], make: Callable[[str], Callable[..., Any]]) -> Callable[[type], type]:
    """Class decorator: replace each operation in `names` the class has with `make(name)`, an async method.

    One it lacks stays absent (`run_in_directory` on a LocalWorkspaceBackend), so no class claims a protocol it lacks.
    """

    def decorate(cls: type) -> type:
        for name in (name for name in names if hasattr(cls, name)):
            method = make(name)
            method.__name__ = name
            setattr(cls, name, method)
        return cls

    return decorate


def _hang(name: str) -> Callable[..., Any]:
    async def hang(self: Any, *args: Any, **kwargs: Any) -> Any:
        await anyio.sleep_forever()

    return hang


@_replacing(OPERATIONS, _hang)
class HangsEverywhere(LocalWorkspaceBackend):
    """Every operation waits forever (until cancelled)."""


@_replacing(('read_bytes',), _hang)
class HangingReads(LocalWorkspaceBackend):
    """`read_bytes` waits forever (until cancelled); everything else works."""


@_replacing(('remove',), _hang)
class HangsOnCleanup(LocalWorkspaceBackend):
    """`remove`, which the harness cleans up with, waits forever (until cancelled)."""


class _Lazy(LocalWorkspaceBackend):
    """A provider-shaped local backend: no ref until the first operation creates the environment."""

    def __init__(self, parent: Path) -> None:
        self._parent = parent
        self._created: WorkspaceRef | None = None
        self._lock = anyio.Lock()

    @property
    def ref(self) -> WorkspaceRef | None:  # type: ignore[override]  # the protocol allows None before creation
        return self._created

    async def _create(self) -> None:
        path = self._parent / f'env-{os.urandom(6).hex()}'
        path.mkdir(parents=True)
        LocalWorkspaceBackend.__init__(self, path)
        self._created = WorkspaceRef(provider='hostile-lazy', id=str(path.resolve()))

    async def _created_environment(self) -> None:
        async with self._lock:
            if self._created is None:
                await self._create()


def _lazy(name: str) -> Callable[..., Any]:
    async def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
        await self._created_environment()
        return await getattr(LocalWorkspaceBackend, name)(self, *args, **kwargs)

    return operation


@_replacing(OPERATIONS, _lazy)
class HangsOnCreate(_Lazy):
    """Creating the environment, on the first operation, never finishes (until cancelled)."""

    async def _create(self) -> None:
        await anyio.sleep_forever()


@_replacing(OPERATIONS, _lazy)
class SlowCreation(_Lazy):
    """Creating the environment takes 30 s; operations wait (cancellably) for the creation already under way."""

    _started: float | None = None

    async def _created_environment(self) -> None:
        if self._started is None:
            self._started = time.monotonic()
        remaining = self._started + CREATION_SECONDS - time.monotonic()
        if remaining > 0:
            await anyio.sleep(remaining)
        await super()._created_environment()


class BlockingReads(LocalWorkspaceBackend):
    """`read_bytes` blocks its thread forever (`time.sleep`): the event loop stalls, and cancellation cannot land."""

    async def read_bytes(self, path: str) -> bytes:
        while True:
            time.sleep(3600)  # noqa: ASYNC251 - the hostile behaviour under test


class ShieldedStat(LocalWorkspaceBackend):
    """`stat` waits forever inside a shielded cancel scope, so cancellation never reaches it."""

    async def stat(self, path: str) -> FileEntry:
        with anyio.CancelScope(shield=True):
            await anyio.sleep_forever()
        raise AssertionError('unreachable')


class ProviderPanic(BaseException):
    """A `BaseException` that is neither `KeyboardInterrupt` nor `SystemExit`, as some SDKs raise."""


def _raise(error: Callable[[str], BaseException]) -> Callable[[str], Callable[..., Any]]:
    def make(name: str) -> Callable[..., Any]:
        async def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
            raise error(name)

        return operation

    return make


@_replacing(FILE_OPERATIONS, _raise(lambda name: ProviderPanic(f'the provider SDK panicked in {name}')))
class RaisesBaseException(LocalWorkspaceBackend):
    """File operations raise `ProviderPanic`, a custom `BaseException` subclass."""


class Unprintable(Exception):
    """An exception whose `__str__` (and `__repr__`) raise."""

    def __str__(self) -> str:
        raise RuntimeError('__str__ of this exception raises')

    def __repr__(self) -> str:
        raise RuntimeError('__repr__ of this exception raises')


@_replacing(FILE_OPERATIONS, _raise(lambda name: Unprintable(name)))
class RaisesUnprintable(LocalWorkspaceBackend):
    """File operations raise an exception whose `__str__` and `__repr__` raise."""


@_replacing(
    FILE_OPERATIONS,
    _raise(
        lambda name: ExceptionGroup(
            f'{name} failed on every replica', [ConnectionError('replica 1 reset'), TimeoutError('replica 2 slow')]
        )
    ),
)
class RaisesExceptionGroup(LocalWorkspaceBackend):
    """File operations raise an `ExceptionGroup` of a connection error and a timeout."""


class ReturnsNone(LocalWorkspaceBackend):
    """`read_bytes` returns `None` instead of bytes."""

    async def read_bytes(self, path: str) -> bytes:
        await super().read_bytes(path)
        return None  # type: ignore[return-value]


class ReturnsStr(LocalWorkspaceBackend):
    """`read_bytes` returns the contents as `str` instead of bytes."""

    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path)).decode('utf-8', 'replace')  # type: ignore[return-value]


class ReturnsDicts(LocalWorkspaceBackend):
    """`stat` returns a dict, and `list_dir` a list of dicts, instead of `FileEntry` objects."""

    async def stat(self, path: str) -> FileEntry:
        return _as_dict(await super().stat(path))  # type: ignore[return-value]

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [_as_dict(entry) for entry in await super().list_dir(path)]  # type: ignore[misc]


def _as_dict(entry: FileEntry) -> dict[str, object]:
    return {'name': entry.name, 'path': entry.path, 'is_dir': entry.is_dir, 'size': entry.size}


class NegativeExitCodes(RewritesResults):
    """`run` reports every exit code negated, and success as -1."""

    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return CommandResult(exit_code=-result.exit_code or -1, stdout=result.stdout, stderr=result.stderr)


class HugeExitCodes(RewritesResults):
    """`run` reports every exit code plus 2**64."""

    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return CommandResult(exit_code=result.exit_code + 2**64, stdout=result.stdout, stderr=result.stderr)


class FloodsOutput(RewritesResults):
    """`run` returns 100 MiB of extra stdout with every command's result."""

    _flood = ''

    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        if not FloodsOutput._flood:
            FloodsOutput._flood = 'x' * FLOOD
        flooded = result.stdout + FloodsOutput._flood if result.stdout else FloodsOutput._flood
        return CommandResult(exit_code=result.exit_code, stdout=flooded, stderr=result.stderr)


class PrintsFlood(LocalWorkspaceBackend):
    """`read_bytes` fails like a noisy provider SDK: its first failure dumps 100 MiB on the harness's stdout."""

    _dumped = False

    async def read_bytes(self, path: str) -> bytes:
        if not PrintsFlood._dumped:
            PrintsFlood._dumped = True
            chunk = 'debug: ' + 'y' * (1024 * 1024 - 8) + '\n'
            for _ in range(FLOOD // len(chunk)):
                sys.stdout.write(chunk)
            sys.stdout.flush()
        raise ConnectionError('the provider SDK failed reading the file; its debug dump is above')


IMMORTALS = 20
"""How many never-ending processes `SpawnsImmortals` starts: one with each of its first 20 commands."""
SPAWNED = 'WORKSPACE_CONFORMANCE_HOSTILE_SPAWNED'
"""An environment variable naming a file where `SpawnsImmortals` appends the pid of each process it starts."""


class SpawnsImmortals(RewritesResults):
    """Each of its first 20 commands also starts a process that never exits, detached into a session of its own."""

    _spawned = 0

    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        if SpawnsImmortals._spawned < IMMORTALS:
            SpawnsImmortals._spawned += 1
            # `sh` starts `sleep` in the background and exits: the sleeper is orphaned, in a session of its own.
            started = subprocess.run(
                ['sh', '-c', 'sleep 1000000 </dev/null >/dev/null 2>&1 & echo $!'],
                start_new_session=True,
                check=True,
                cwd='/',
                capture_output=True,
                text=True,
            )
            log = os.environ.get(SPAWNED)
            if log:
                with open(log, 'a') as spawned:
                    spawned.write(started.stdout)
        return result


def _mortal(name: str) -> Callable[..., Any]:
    async def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.operations += 1
        if self.operations == LIFETIME:
            shutil.rmtree(self.root, ignore_errors=True)
        if self.operations >= LIFETIME:
            raise WorkspaceUnavailableError(f'the environment at {self.root} destroyed itself')
        return await getattr(LocalWorkspaceBackend, name)(self, *args, **kwargs)

    return operation


LIFETIME = 200


@_replacing(OPERATIONS, _mortal)
class DestroysItself(LocalWorkspaceBackend):
    """On its 200th operation it deletes its own working directory; from then on every operation is unavailable."""

    def __init__(self, working_dir: Path) -> None:
        super().__init__(working_dir)
        self.root = working_dir
        self.operations = 0


STARTED = 'WORKSPACE_CONFORMANCE_HOSTILE_STARTED'
"""An environment variable naming a file the slow backends create on their first operation, once rules run."""
SLOW_SECONDS = 0.2


def _announce_start(backend: LocalWorkspaceBackend | None = None) -> None:
    """Create the `STARTED` file, unless `backend` is the one `certify`'s preflight builds (under `preflight/`)."""
    ref = backend.ref if backend is not None else None
    if ref is not None and 'preflight' in Path(ref.id).parts:
        return
    started = os.environ.get(STARTED)
    if started and not os.path.exists(started):
        Path(started).touch()


def _slow(name: str) -> Callable[..., Any]:
    async def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
        _announce_start(self)
        await anyio.sleep(SLOW_SECONDS)
        return await getattr(LocalWorkspaceBackend, name)(self, *args, **kwargs)

    return operation


@_replacing(OPERATIONS, _slow)
class SlowOperations(LocalWorkspaceBackend):
    """Every operation takes 0.2 s longer (cancellably), so a certification runs long enough to be interrupted."""


class SlowRemove(LocalWorkspaceBackend):
    """`remove` takes 60 s (cancellably), so the cleanup after an interrupt waits on it."""

    async def remove(self, path: str) -> None:
        _announce_start(self)
        await anyio.sleep(60)
        await super().remove(path)


def slow_operations(run_dir: Path) -> SlowOperations:
    return SlowOperations(_directory(run_dir, 'slow-operations'))


def slow_remove(run_dir: Path) -> SlowRemove:
    return SlowRemove(_directory(run_dir, 'slow-remove'))


def hangs_everywhere(run_dir: Path) -> HangsEverywhere:
    return HangsEverywhere(_directory(run_dir, 'hangs-everywhere'))


def hanging_reads(run_dir: Path) -> HangingReads:
    return HangingReads(_directory(run_dir, 'hanging-reads'))


def hangs_on_cleanup(run_dir: Path) -> HangsOnCleanup:
    return HangsOnCleanup(_directory(run_dir, 'hangs-on-cleanup'))


def local(run_dir: Path) -> LocalWorkspaceBackend:
    return LocalWorkspaceBackend(_directory(run_dir, 'local'))


def hangs_on_create(run_dir: Path) -> HangsOnCreate:
    return HangsOnCreate(_directory(run_dir, 'hangs-on-create'))


def slow_creation(run_dir: Path) -> SlowCreation:
    return SlowCreation(_directory(run_dir, 'slow-creation'))


def blocking_reads(run_dir: Path) -> BlockingReads:
    return BlockingReads(_directory(run_dir, 'blocking-reads'))


def shielded_stat(run_dir: Path) -> ShieldedStat:
    return ShieldedStat(_directory(run_dir, 'shielded-stat'))


def raises_base_exception(run_dir: Path) -> RaisesBaseException:
    return RaisesBaseException(_directory(run_dir, 'raises-base-exception'))


def raises_unprintable(run_dir: Path) -> RaisesUnprintable:
    return RaisesUnprintable(_directory(run_dir, 'raises-unprintable'))


def raises_exception_group(run_dir: Path) -> RaisesExceptionGroup:
    return RaisesExceptionGroup(_directory(run_dir, 'raises-exception-group'))


def returns_none(run_dir: Path) -> ReturnsNone:
    return ReturnsNone(_directory(run_dir, 'returns-none'))


def returns_str(run_dir: Path) -> ReturnsStr:
    return ReturnsStr(_directory(run_dir, 'returns-str'))


def returns_dicts(run_dir: Path) -> ReturnsDicts:
    return ReturnsDicts(_directory(run_dir, 'returns-dicts'))


def negative_exit_codes(run_dir: Path) -> NegativeExitCodes:
    return NegativeExitCodes(_directory(run_dir, 'negative-exit-codes'))


def huge_exit_codes(run_dir: Path) -> HugeExitCodes:
    return HugeExitCodes(_directory(run_dir, 'huge-exit-codes'))


def floods_output(run_dir: Path) -> FloodsOutput:
    return FloodsOutput(_directory(run_dir, 'floods-output'))


def prints_flood(run_dir: Path) -> PrintsFlood:
    return PrintsFlood(_directory(run_dir, 'prints-flood'))


def spawns_immortals(run_dir: Path) -> SpawnsImmortals:
    return SpawnsImmortals(_directory(run_dir, 'spawns-immortals'))


def destroys_itself(run_dir: Path) -> DestroysItself:
    return DestroysItself(_directory(run_dir, 'destroys-itself'))


class LeavesAProcess(SlowOperations):
    """`SlowOperations` that starts a detached `sleep 600` working in its directory when it is built.

    Such a process outlives a `certify` killed with SIGKILL, as a rule's background job would: the next run must
    find it through the dead run's directory and end it.
    """

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        subprocess.Popen(
            ['sleep', '600'],
            cwd=root,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def leaves_a_process(run_dir: Path) -> LeavesAProcess:
    return LeavesAProcess(_directory(run_dir, 'leaves-a-process'))


def slow_to_build(run_dir: Path) -> LocalWorkspaceBackend:
    """Takes 60 s to build (blocking), in `certify`'s preflight: a run stopped before any rule."""
    _announce_start()
    time.sleep(60)
    return LocalWorkspaceBackend(_directory(run_dir, 'slow-to-build'))
