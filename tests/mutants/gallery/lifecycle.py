"""Mutants of the lifecycle rules: refs, working directories, creation, attachment and destruction gone wrong."""

from __future__ import annotations

import dataclasses
import functools
import shutil
import threading
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    LocalWorkspaceBackend,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)

from workspace_conformance.doubles.forwarding import RunCall
from workspace_conformance.targets.local import LAZY_PROVIDER, LazyLocalBackend

from ..registry import Build, breaks, mutant, shared_dir
from ._shared import InterceptsRun, _below, _sacrificial_dir


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

    async def run(self, command: WorkspaceCommand, **options: Any) -> CommandResult:
        return await self._local.run(command, **options)


mutant(
    name='no_ref_member',
    kills=['has_the_required_members'],
    bug='A backend written before refs existed has commands and working_dir but no ref property.',
    backend=lambda run_dir: NoRefMember(shared_dir(run_dir)),  # type: ignore[arg-type,return-value]  # the bug
)


@breaks(
    kills=['working_dir_is_canonical'],
    bug="working_dir() returns the provider's path spelled with a trailing '/', which is not normalized.",
)
class WorkingDirWithTrailingSlash(LocalWorkspaceBackend):
    async def working_dir(self) -> str:
        return await super().working_dir() + '/'


class WorkingDirAsConfigured(LocalWorkspaceBackend):
    def __init__(self, working_dir: Path) -> None:
        super().__init__(working_dir)
        self._configured = str(working_dir)

    async def working_dir(self) -> str:
        await super().working_dir()
        return self._configured


def _through_a_link(kind: Callable[[Path], WorkspaceBackend]) -> Build:
    """A mutant's backend: `kind` built on the shared directory reached through a symlink inside the run directory."""

    def build(run_dir: Path) -> WorkspaceBackend:
        link = run_dir / 'shared-link'
        if not link.is_symlink():
            link.symlink_to(shared_dir(run_dir), target_is_directory=True)
        return kind(link)

    return build


mutant(
    name='working_dir_keeps_symlinks',
    kills=['working_dir_is_canonical'],
    bug='working_dir() returns the configured path without resolving its symlinks, so `pwd -P` disagrees with it.',
    backend=_through_a_link(WorkingDirAsConfigured),
)


@breaks(
    kills=['ref_exists_after_the_first_operation_and_is_stable'],
    bug='ref builds a new WorkspaceRef from a fresh session id on every access instead of keeping the first.',
)
class NewRefOnEveryAccess(LocalWorkspaceBackend):
    @property
    def ref(self) -> WorkspaceRef:
        return WorkspaceRef(provider='local-session', id=uuid.uuid4().hex)


@breaks(
    kills=['ref_exists_after_the_first_operation_and_is_stable'],
    bug='ref is only filled in by an explicit create() call, so it stays None after operations create the environment.',
)
class RefNeverSet(LocalWorkspaceBackend):
    @property
    def ref(self) -> None:  # type: ignore[override]  # the bug
        return None


class UnlockedLazyBackend(LazyLocalBackend):
    """`LazyLocalBackend` without its creation lock: every concurrent first use creates an environment."""

    async def _inner(self) -> LocalWorkspaceBackend:
        if self._local is None:
            # The creation awaits a thread, so every concurrent caller gets here before any of them finishes.
            ref = self._ref or await self._create_environment()
            self._local = LocalWorkspaceBackend(ref.id)
        return self._local


mutant(
    name='unlocked_first_use',
    kills=['concurrent_first_use_shares_one_environment'],
    bug='First use checks "no environment yet" and creates one without a lock, so concurrent first uses each create.',
    fresh_backend=lambda run_dir: UnlockedLazyBackend(run_dir / 'fresh'),
)


mutant(
    name='attach_ignores_the_ref',
    kills=['a_backend_attached_by_ref_reaches_the_same_environment'],
    bug='The attach path drops the ref it is given and builds a backend that creates a new environment.',
    attach_backend=lambda run_dir, ref: LazyLocalBackend(run_dir / 'fresh'),
)


class DestroyedIsANormalExit(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        try:
            return await self._forward(call)
        except WorkspaceUnavailableError as error:
            return CommandResult(exit_code=0, stdout='', stderr=str(error))


mutant(
    name='destroyed_is_a_normal_exit',
    kills=['destroying_environment_during_command_raises_unavailable'],
    bug='run() reports a command whose environment was destroyed under it as an ordinary exit instead of raising.',
    destructive_backend=lambda run_dir: DestroyedIsANormalExit(_sacrificial_dir(run_dir)),
)


def _recreating_attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    path = Path(ref.id)
    if _below(path, run_dir):  # the bug stays inside the run directory
        path.mkdir(parents=True, exist_ok=True)
    return LocalWorkspaceBackend(path)


mutant(
    name='attach_recreates_a_destroyed_environment',
    kills=['attaching_to_a_destroyed_environment_raises_unavailable'],
    bug="Attaching by ref runs `mkdir -p` on the ref's directory, silently recreating a destroyed environment empty.",
    attach_backend=_recreating_attach,
)


READY_WAIT = 1.5
"""How long the mutant's sandbox takes to report ready after its create returned: long beside the create itself, so
the rule's half-way cancel lands in the wait even when its probe's create was slowed by a loaded machine (at 0.5 s a
probe slowed by half a second let the mutant through in CI)."""


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


mutant(
    name='resolves_the_working_dir_late',
    kills=['working_dir_is_stable'],
    bug='working_dir() returns the configured path until a file operation connects, then the resolved one.',
    backend=_through_a_link(ResolvesTheWorkingDirLate),
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
    fresh_backend=lambda run_dir: ProvisionsInTheBackground(run_dir / 'fresh'),
)


@breaks(
    kills=['ref_survives_a_failed_operation'],
    bug='Any failed operation makes the client reconnect and take the new session id as its ref.',
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
    fresh_backend=lambda run_dir: RecordsTheRefAfterFirstSuccess(run_dir / 'fresh'),
)


BOOT_SECONDS = 3.0
"""How long the mutant's sandbox takes to boot: past the first command's timeout at the gate's time scale and at 1."""


Run = Callable[..., Awaitable[CommandResult]]


async def _timed_from_before(connect: Callable[[], Awaitable[Run]], call: RunCall) -> CommandResult:
    """`call` made on the `run` that `connect()` gives; the bug: its deadline is taken before connecting."""
    deadline = None if call.timeout is None else anyio.current_time() + call.timeout
    run = await connect()
    left = None if deadline is None else deadline - anyio.current_time()
    if left is not None and left <= 0:
        raise WorkspaceTimeoutError(f'command timed out after {call.timeout:g}s')
    return await dataclasses.replace(call, timeout=left).to(run)


class CountsCreationAgainstTheTimeout(LazyLocalBackend):
    async def _create_environment(self) -> WorkspaceRef:
        await anyio.sleep(BOOT_SECONDS)  # a sandbox that takes seconds to boot
        return await super()._create_environment()

    async def _take_run(self, call: RunCall) -> CommandResult:
        async def connect() -> Run:
            return (await self._inner()).run

        return await _timed_from_before(connect, call)


mutant(
    name='counts_creation_against_the_timeout',
    kills=['the_first_command_timeout_starts_after_creation'],
    bug="run() takes its deadline before connecting, so a sandbox's boot time is spent from the command's timeout.",
    fresh_backend=lambda run_dir: CountsCreationAgainstTheTimeout(run_dir / 'fresh'),
)


class DestroysItsEnvironmentWhenCollected(LazyLocalBackend):
    def __del__(self) -> None:
        # The bug: the SDK object's finalizer terminates the sandbox it created (only inside the run directory).
        if self._ref is not None and _below(Path(self._ref.id), self._parent):
            shutil.rmtree(self._ref.id, ignore_errors=True)


mutant(
    name='destroys_its_environment_when_collected',
    kills=['dropping_a_backend_keeps_its_environment'],
    bug='The backend terminates its sandbox in __del__, so an environment dies with the Python object that made it.',
    fresh_backend=lambda run_dir: DestroysItsEnvironmentWhenCollected(run_dir / 'fresh'),
)


class CountsConnectingAgainstTheTimeout(InterceptsRun):
    _connected = False

    async def _take_run(self, call: RunCall) -> CommandResult:
        async def connect() -> Run:
            if not self._connected:  # opening the session to the sandbox
                await anyio.sleep(BOOT_SECONDS)
                self._connected = True
            return functools.partial(LocalWorkspaceBackend.run, self)

        return await _timed_from_before(connect, call)


mutant(
    name='counts_connecting_against_the_timeout',
    kills=['the_first_command_timeout_starts_after_attaching'],
    bug="An attached backend's run() takes its deadline before opening its session, spending the connect time.",
    attach_backend=lambda run_dir, ref: CountsConnectingAgainstTheTimeout(ref.id),
)
