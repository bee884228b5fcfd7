"""Rules on the environment's lifecycle: members, ref, working directory, creation, attach and destroy."""

from __future__ import annotations

import contextlib
import gc
import inspect
import uuid
import weakref
from collections.abc import Awaitable, Callable

import anyio
from pydantic_ai.workspaces import (
    SupportsCommands,
    SupportsFilesystem,
    Workspace,
    WorkspaceBackend,
    WorkspaceError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)

from ..authoring import (
    PWD_ARGV,
    SCRATCH_PREFIX,
    ConformanceConfigError,
    FaultKind,
    InjectFault,
    commands_of,
    current_platform,
    current_run,
    expect_error,
    lines,
    paths,
    platform_argv,
    rule,
    safe_str,
    scratch,
    skip,
    supplied,
    unwrap,
    wait_until,
    workspace_of,
)

__all__ = ('LifecycleRules',)

Factory = Callable[[], WorkspaceBackend] | None
ABANDONED_BOUND = 30.0
"""Seconds the next worker's command may take after a call was abandoned halfway."""
Attach = Callable[[WorkspaceRef], WorkspaceBackend]
Destroy = Callable[[WorkspaceBackend], Awaitable[None]] | None
FIRST_COMMAND_TIMEOUT = 2.0
"""Seconds (at time scale 1) a fresh backend's first command, `true`, is given: ample for `true` on a loaded machine,
and less than the creation of a sandbox that takes seconds to boot."""


async def _remove_quietly(workspace: Workspace, path: str) -> None:
    with anyio.move_on_after(current_run().seconds(30), shield=True):
        try:
            await workspace.remove(path)
        except Exception:  # cleanup of a rule that already has its verdict
            return


async def _marked_attached_and_dropped(
    fresh_backend: Callable[[], WorkspaceBackend], attach_backend: Attach, mark: str, payload: bytes
) -> tuple[WorkspaceBackend, weakref.ref[object]]:
    """A fresh backend whose first operation writes `mark`, a backend attached by its ref, and a weakref to the first.

    Returning drops the first backend: nothing of it is left but the weakref.
    """
    backend = fresh_backend()
    await workspace_of(backend).write_bytes(mark, payload)
    ref = backend.ref
    assert isinstance(ref, WorkspaceRef), f'after writing a file as its first operation, a fresh backend had {ref!r}'
    attached = attach_backend(ref)  # built first: whoever holds the ref reaches the environment later
    raw = unwrap(backend)
    try:
        return attached, weakref.ref(raw)
    except TypeError:
        skip('runner', f'{type(raw).__name__} objects cannot be weakly referenced, so their going away is not seen')


async def _first_command_meets_a_short_timeout(build: Callable[[], WorkspaceBackend], which: str, doing: str) -> None:
    """Fail unless `run(['true'], timeout=T)` as a built backend's first operation meets T when a ready one does.

    T is `FIRST_COMMAND_TIMEOUT`, then 3 and 9 times it where `true` needs longer even in a ready environment.
    """
    given = []
    for factor in (1, 3, 9):
        timeout = current_run().seconds(FIRST_COMMAND_TIMEOUT * factor)
        given.append(f'{timeout:g} s')
        backend = build()
        call = f"run(['true'], timeout={timeout:g}) as the first operation of {which}"
        started = anyio.current_time()
        try:  # any result meets the clause, even exit 127 where `true` is missing: the clock did not run out
            await commands_of(backend).run(['true'], timeout=timeout)
            return
        except WorkspaceTimeoutError as error:
            took = anyio.current_time() - started
            first = error
        started = anyio.current_time()
        try:  # ready now: the same call decides whether getting ready was counted
            await commands_of(backend).run(['true'], timeout=timeout)
        except WorkspaceTimeoutError:
            continue  # `true` needs longer here even in a ready environment: no verdict at this timeout
        ready = anyio.current_time() - started
        if ready > timeout / 2:
            continue  # it barely met the timeout ready: the first call may have missed it by the command alone
        raise AssertionError(
            f'{call} raised, after {took:.2f} s, {safe_str(first)}, and the same call on the ready environment '
            f'returned in {ready:.2f} s: {doing} the environment counted against the timeout'
        ) from first
    skip('runner', f"run(['true']) timed out even on a ready environment, given {', then '.join(given)}")


class LifecycleRules:
    """Rules on building, creating, attaching to and destroying environments."""

    @rule(area='lifecycle', upstream=True, must='B01')
    async def test_has_the_required_members(self, backend: WorkspaceBackend) -> None:
        """A backend has `ref` and `working_dir`, plus `SupportsCommands`, `SupportsFilesystem`, or both."""
        raw = unwrap(backend)
        missing = [name for name in ('ref', 'working_dir') if not hasattr(raw, name)]
        assert not missing, f'{type(raw).__qualname__} lacks {missing}'
        assert isinstance(raw, WorkspaceBackend), f'{type(raw).__qualname__} is not a WorkspaceBackend'
        assert isinstance(raw, SupportsCommands | SupportsFilesystem), (
            f'{type(raw).__qualname__} implements neither SupportsCommands nor SupportsFilesystem'
        )

    @rule(area='lifecycle', upstream=True, must='B21')
    async def test_working_dir_is_canonical(self, backend: WorkspaceBackend) -> None:
        """`working_dir()` is absolute and normalized, and is the directory commands start in (`pwd -P`)."""
        working_dir = await backend.working_dir()
        assert isinstance(working_dir, str), f'working_dir() returned {type(working_dir).__name__}'
        assert paths.isabs(working_dir), f'working_dir() returned the relative path {working_dir!r}'
        assert paths.normpath(working_dir) == working_dir, f'working_dir() {working_dir!r} is not normalized'
        if isinstance(backend, SupportsCommands):
            result = await backend.run(platform_argv(PWD_ARGV))  # `cmd /d /c cd` on a 'windows' workspace
            assert lines(result.stdout) == f'{working_dir}\n', (
                f'commands start in {result.stdout!r}, but working_dir() is {working_dir!r}'
            )

    @rule(area='lifecycle', upstream=True, must='B08')
    async def test_ref_exists_after_the_first_operation_and_is_stable(self, backend: WorkspaceBackend) -> None:
        """`ref` is a `WorkspaceRef` once an operation has completed, and never changes afterwards."""
        before = backend.ref
        await backend.working_dir()
        after_first = backend.ref
        assert isinstance(after_first, WorkspaceRef), f'after working_dir() the ref was {after_first!r}'
        assert before in (None, after_first), f'the ref changed from {before!r} to {after_first!r}'
        await backend.working_dir()
        assert backend.ref == after_first, f'the ref changed from {after_first!r} to {backend.ref!r}'

    @rule(area='lifecycle', level='extended', requires=['fresh'], upstream=True, must='B05')
    async def test_concurrent_first_use_shares_one_environment(self, fresh_backend: Factory) -> None:
        """Concurrent first operations on a fresh backend create one environment and share one ref."""
        fresh_backend = supplied(fresh_backend, 'fresh')
        backend = fresh_backend()
        assert backend.ref is None, f'a freshly built backend already had the ref {backend.ref!r}'
        workspace = workspace_of(backend)
        # Relative paths: the writes themselves are the first operations, all inside one scratch directory.
        folder = f'{SCRATCH_PREFIX}first-use-{uuid.uuid4().hex[:12]}'
        names = [f'{folder}/writer-{index}' for index in range(6)]
        refs: list[WorkspaceRef | None] = []

        async def write(name: str) -> None:
            await workspace.write_bytes(name, name.encode())
            refs.append(backend.ref)

        try:
            async with anyio.create_task_group() as group:
                for name in names:
                    group.start_soon(write, name)
            ref = backend.ref
            assert isinstance(ref, WorkspaceRef), f'after the first operations the ref was {ref!r}'
            assert all(seen == ref for seen in refs), f'writers saw different refs: {refs!r}'
            for name in names:
                data = await workspace.read_bytes(name)
                assert data == name.encode(), f'{name} read back {data!r}: the writers did not share one environment'
            assert backend.ref == ref, f'the ref changed from {ref!r} to {backend.ref!r}'
        finally:
            await _remove_quietly(workspace, folder)

    @rule(area='lifecycle', level='extended', requires=['attach'], upstream=True, must='B05')
    async def test_a_backend_attached_by_ref_reaches_the_same_environment(
        self, backend: WorkspaceBackend, attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None
    ) -> None:
        """A backend built from another's ref reaches the same files and commands, and keeps that ref."""
        attach_backend = supplied(attach_backend, 'attach')
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'written-before-attach')
            payload = f'reached {uuid.uuid4().hex}'.encode()
            await workspace.write_bytes(path, payload)
            ref = backend.ref
            assert ref is not None, 'the backend had no ref after writing a file'
            attached = attach_backend(ref)
            data = await Workspace(attached).read_bytes(path)
            assert data == payload, f'the attached backend read {data!r}, expected {payload!r}'
            if isinstance(attached, SupportsCommands) and current_platform() == 'posix':
                result = await attached.run(['cat', path])
                assert result.stdout == payload.decode(), f'`cat` on the attached backend printed {result.stdout!r}'
            assert attached.ref == ref, f'attaching by {ref!r} left the backend with the ref {attached.ref!r}'

    @rule(area='lifecycle', level='extended', requires=['fresh', 'attach', 'commands', 'posix_shell'], since='0.3.0')
    async def test_a_call_abandoned_halfway_leaves_the_environment_to_the_next_worker(
        self, fresh_backend: Factory, attach_backend: Attach | None
    ) -> None:
        """A command whose caller was cancelled halfway and whose backend was dropped leaves the environment usable.

        A durable engine whose worker dies mid-call runs the call again in another worker: a backend attached by the
        same ref must get its commands run, not wait on what the dead one held.
        """
        fresh_backend, attach_backend = supplied(fresh_backend, 'fresh'), supplied(attach_backend, 'attach')
        # A fresh environment, so the abandoned `sleep` never lingers in the one later rules share.
        made = fresh_backend()
        await made.working_dir()
        ref = made.ref
        assert isinstance(ref, WorkspaceRef), f'the fresh backend had the ref {ref!r} after an operation'
        dying = attach_backend(ref)
        await dying.working_dir()  # connected first, so the cancel lands in the command, not in attaching
        with anyio.move_on_after(current_run().seconds(0.5)):
            await commands_of(dying).run(['sh', '-c', 'sleep 30'])
        del dying  # the worker is gone: nothing of it closes or releases anything
        gc.collect()
        bound = current_run().seconds(ABANDONED_BOUND)
        with anyio.move_on_after(bound) as waited:
            result = await commands_of(attach_backend(ref)).run(['sh', '-c', 'printf next'])
        assert not waited.cancelled_caught, (
            f'a backend attached by {ref!r} after a call there was abandoned halfway got no answer in {bound:g} s'
        )
        assert (result.exit_code, result.stdout) == (0, 'next'), f"the next worker's command gave {result!r}"

    @rule(
        area='lifecycle', level='extended', requires=['commands', 'posix_shell', 'destroy'], upstream=True, must='B12'
    )
    async def test_destroying_environment_during_command_raises_unavailable(
        self, destructive_backend: Factory, destroy_environment: Destroy
    ) -> None:
        """A command running while its environment is destroyed raises `WorkspaceUnavailableError`."""
        destructive_backend, destroy_environment = (
            supplied(destructive_backend, 'destroy'),
            supplied(destroy_environment, 'destroy'),
        )
        backend = destructive_backend()
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        root = await backend.working_dir()
        marker = paths.join(root, f'{SCRATCH_PREFIX}running-{uuid.uuid4().hex[:12]}')
        outcome: list[BaseException | str] = []

        async def run_until_destroyed() -> None:
            try:
                # A deleted local directory does not kill the processes inside it, so the script ends by itself.
                result = await commands.run(
                    ['sh', '-c', 'printf up > "$1"; while [ -d "$2" ]; do sleep 0.1; done', 'sh', marker, root],
                    timeout=current_run().seconds(30),
                )
                outcome.append(f'a normal result with exit code {result.exit_code}')
            except Exception as error:
                outcome.append(error)

        async with anyio.create_task_group() as group:
            group.start_soon(run_until_destroyed)
            await wait_until(lambda: workspace.exists(marker), 30, 'the command never started')
            await destroy_environment(backend)
        observed = outcome[0] if outcome else 'nothing'
        assert isinstance(observed, WorkspaceUnavailableError), f'the command ended with {observed!r}'

    @rule(area='lifecycle', level='extended', requires=['attach', 'destroy'], upstream=True, must='B06')
    async def test_attaching_to_a_destroyed_environment_raises_unavailable(
        self,
        destructive_backend: Factory,
        attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None,
        destroy_environment: Destroy,
    ) -> None:
        """A backend attached by the ref of a destroyed environment raises `WorkspaceUnavailableError`."""
        destructive_backend = supplied(destructive_backend, 'destroy')
        attach_backend = supplied(attach_backend, 'attach')
        destroy_environment = supplied(destroy_environment, 'destroy')
        backend = destructive_backend()
        await backend.working_dir()
        ref = backend.ref
        assert ref is not None, 'the backend had no ref after its first operation'
        await destroy_environment(backend)
        with expect_error(WorkspaceUnavailableError, f'working_dir() of a backend attached to the destroyed {ref!r}'):
            await attach_backend(ref).working_dir()

    # It measures how long a cancelled creation takes: other rules' load would skew that.
    @rule(area='lifecycle', level='extended', requires=['fresh'], since='0.2.0', timeout=120, alone=True, must='B10')
    async def test_cancellation_mid_create_keeps_the_ref(self, fresh_backend: Factory) -> None:
        """A backend keeps the ref of an environment it created even when the caller is cancelled mid-create."""
        # A first operation is cancelled at once, half-way and near the end of the time an uncancelled one takes.
        # A cancellation that early may legitimately land before the create starts, so only the late ones must
        # leave a ref; every cancelled backend must then create at most one environment for its later operations.
        fresh_backend = supplied(fresh_backend, 'fresh')
        probe = fresh_backend()
        started = anyio.current_time()
        await probe.working_dir()
        took = anyio.current_time() - started
        assert isinstance(probe.ref, WorkspaceRef), (
            f'after its first operation a fresh backend had the ref {probe.ref!r}'
        )
        kept_after_late_cancel: list[WorkspaceRef | None] = []
        for fraction in (0.0, 0.5, 0.9):
            backend = fresh_backend()
            delay = took * fraction
            errors: list[BaseException] = []

            async def first_operation(
                backend: WorkspaceBackend = backend, errors: list[BaseException] = errors
            ) -> None:
                try:
                    await backend.working_dir()
                except Exception as error:  # what a cancelled create raises is not this rule's concern
                    errors.append(error)

            async with anyio.create_task_group() as group:
                group.start_soon(first_operation)
                await anyio.sleep(delay)
                group.cancel_scope.cancel()
            kept = backend.ref
            if fraction:
                kept_after_late_cancel.append(kept)
            refs: list[WorkspaceRef | None] = []

            async def later_operation(
                backend: WorkspaceBackend = backend, refs: list[WorkspaceRef | None] = refs
            ) -> None:
                await backend.working_dir()
                refs.append(backend.ref)

            async with anyio.create_task_group() as group:
                for _ in range(2):
                    group.start_soon(later_operation)
            when = f'after a cancellation {delay:.3f} s into a first operation that takes {took:.3f} s uncancelled'
            assert refs[0] is not None and refs[0] == refs[1], f'{when}, two later operations saw the refs {refs!r}'
            assert kept in (None, refs[0]), f'{when}, the ref {kept!r} was replaced by {refs[0]!r}'
        assert any(kept is not None for kept in kept_after_late_cancel), (
            f'cancelled half-way and near the end of a {took:.3f} s first operation, the backend had no ref '
            'both times: the environment it was creating was lost'
        )

    @rule(area='lifecycle', since='0.2.0', must='B42', grounds=('working_dir',))
    async def test_working_dir_is_stable(self, backend: WorkspaceBackend) -> None:
        """`working_dir()` returns the same path on every call, concurrent or not, before and after other operations."""
        first = await backend.working_dir()
        seen = [first, await backend.working_dir()]

        async def ask() -> None:
            seen.append(await backend.working_dir())

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(ask)
        if isinstance(backend, SupportsFilesystem | SupportsCommands):
            await workspace_of(backend).exists(first)
        seen.append(await backend.working_dir())
        assert all(path == first for path in seen), f'working_dir() returned {sorted(set(seen))!r}'

    @rule(area='lifecycle', level='extended', requires=['attach'], since='0.2.0', must='B43')
    async def test_attaching_keeps_the_ref_without_creating(
        self, backend: WorkspaceBackend, attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None
    ) -> None:
        """A backend built from a ref has exactly that ref from construction on, before and after its first use."""
        attach_backend = supplied(attach_backend, 'attach')
        await backend.working_dir()
        ref = backend.ref
        assert isinstance(ref, WorkspaceRef), f'the backend had the ref {ref!r} after an operation'
        attached = attach_backend(ref)
        assert attached.ref == ref, f'built from {ref!r}, the attached backend had the ref {attached.ref!r} before use'
        await attached.working_dir()
        assert attached.ref == ref, f'attached by {ref!r}, the backend had the ref {attached.ref!r} after an operation'
        assert backend.ref == ref, f'attaching changed the original backend ref to {backend.ref!r}'

    @rule(area='lifecycle', level='extended', requires=['attach'], since='0.2.0', must='D01')
    async def test_attached_backend_shares_the_working_dir(
        self, backend: WorkspaceBackend, attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None
    ) -> None:
        """A backend attached by ref reports the same working directory as the backend that created the environment."""
        attach_backend = supplied(attach_backend, 'attach')
        working_dir = await backend.working_dir()
        ref = backend.ref
        assert ref is not None, 'the backend had no ref after an operation'
        attached = await attach_backend(ref).working_dir()
        assert attached == working_dir, f'attached by {ref!r}, working_dir() is {attached!r}, not {working_dir!r}'

    @rule(area='lifecycle', level='extended', requires=['fresh'], since='0.2.0', must='B04')
    async def test_building_a_backend_creates_nothing(self, fresh_backend: Factory) -> None:
        """A backend built without a ref does no I/O: its ref stays `None` until its own first operation."""
        fresh_backend = supplied(fresh_backend, 'fresh')
        used, idle = fresh_backend(), fresh_backend()
        assert used.ref is None and idle.ref is None, f'freshly built backends had the refs {used.ref!r}, {idle.ref!r}'
        await anyio.sleep(current_run().seconds(0.5))  # time for a creation started in the background to finish
        assert used.ref is None and idle.ref is None, (
            f'half a second after construction, unused backends had the refs {used.ref!r}, {idle.ref!r}'
        )
        await used.working_dir()
        assert used.ref is not None, 'a fresh backend had no ref after its first operation'
        assert idle.ref is None, f'another fresh backend, never used, had the ref {idle.ref!r}'

    @rule(area='lifecycle', requires=['filesystem'], since='0.2.0', must='B08')
    async def test_ref_survives_a_failed_operation(self, backend: WorkspaceBackend) -> None:
        """An operation that raises a path-level error such as `FileNotFoundError` leaves the ref unchanged."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            kept = paths.join(root, 'kept')
            await workspace.write_bytes(kept, b'kept')
            ref = backend.ref
            assert ref is not None, 'the backend had no ref after writing a file'
            missing = paths.join(root, 'missing')
            for name in ('read_bytes', 'stat', 'list_dir'):
                with expect_error(FileNotFoundError, f'{name}({missing!r})'):
                    await getattr(workspace, name)(missing)
                assert backend.ref == ref, f'after {name} of a missing path raised, the ref changed to {backend.ref!r}'
            assert await workspace.read_bytes(kept) == b'kept', (
                'after the failed operations a file written before is gone'
            )
            assert backend.ref == ref, f'the ref changed from {ref!r} to {backend.ref!r}'

    @rule(area='lifecycle', level='extended', requires=['fresh'], since='0.2.0', must='B07')
    async def test_a_failing_first_operation_still_records_the_ref(self, fresh_backend: Factory) -> None:
        """The ref is recorded as soon as a create returns, so a first operation that fails still leaves it set."""
        fresh_backend = supplied(fresh_backend, 'fresh')
        backend = fresh_backend()
        missing = f'/{SCRATCH_PREFIX}missing-{uuid.uuid4().hex[:12]}/child'
        # An absolute path, so `Workspace` asks nothing else first: the failing `stat` is the first operation.
        with expect_error(OSError, f'stat({missing!r}) as the first operation of a fresh backend'):
            await workspace_of(backend).stat(missing)
        ref = backend.ref
        assert isinstance(ref, WorkspaceRef), f'after a first operation that failed, the ref was {ref!r}'
        await backend.working_dir()
        assert backend.ref == ref, f'the ref changed from {ref!r} to {backend.ref!r}'

    @rule(area='lifecycle', level='extended', requires=['fresh', 'faults'], since='0.3.0')
    async def test_a_setup_failing_right_after_the_create_leaves_the_ref(
        self, fresh_backend: Factory, inject_fault: InjectFault | None
    ) -> None:
        """When the setup right after a create fails, the first operation fails but the ref is already recorded."""
        backend = supplied(fresh_backend, 'fresh')()
        _armed(supplied(inject_fault, 'faults'), backend, 'setup')
        # The first operation may raise the SDK's error, wrap it, or retry the setup and succeed: the ref is the rule.
        with contextlib.suppress(Exception):
            await workspace_of(backend).working_dir()
        ref = backend.ref
        assert isinstance(ref, WorkspaceRef), (
            f'after the setup that follows the create failed, the ref was {ref!r}: the environment it made has no '
            'ref to clean it up by'
        )
        with contextlib.suppress(Exception):  # a backend may give up on a half-set-up environment, ref kept
            await workspace_of(backend).working_dir()
        assert backend.ref == ref, f'after the failed setup the ref changed from {ref!r} to {backend.ref!r}'

    @rule(area='lifecycle', level='extended', requires=['fresh', 'filesystem', 'faults'], since='0.3.0')
    async def test_a_provider_s_transient_error_reaches_the_caller_unchanged(
        self, fresh_backend: Factory, inject_fault: InjectFault | None
    ) -> None:
        """A transient error of the provider's SDK propagates as itself, so a durable engine can retry the call."""
        # A fresh backend, so a fault that never fires cannot go off in a later rule.
        backend = supplied(fresh_backend, 'fresh')()
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            path = paths.join(root, 'present')
            await workspace.write_bytes(path, b'here')
            ref = backend.ref
            raised = _armed(supplied(inject_fault, 'faults'), backend, 'transient')
            if issubclass(raised, WorkspaceError):
                raise ConformanceConfigError(
                    f"inject_fault(backend, 'transient') returned {raised.__name__}, a WorkspaceError: return the "
                    "provider SDK's own error type, the one the backend must let through"
                )
            try:
                found = await workspace.exists(path)
            except raised:
                pass
            except Exception as error:
                kind = (
                    'a WorkspaceError, which durable engines never retry' if isinstance(error, WorkspaceError) else ''
                )
                raise AssertionError(
                    f"the SDK's transient {raised.__name__} came out of exists() as {safe_str(error)}"
                    + (f': {kind}' if kind else '')
                ) from error
            else:
                raise AssertionError(
                    f"exists() answered {found!r} with the SDK's transient {raised.__name__} armed: the backend retried"
                    ' or swallowed it (or the fault never fired), where the contract says let it propagate'
                )
            assert await workspace.exists(path), 'after one transient error the next call did not find the file'
            assert backend.ref == ref, f'the transient error changed the ref from {ref!r} to {backend.ref!r}'

    # Up to three tries of two calls each, at 2, 6 and 18 s (scaled), plus three creations.
    @rule(area='lifecycle', level='extended', requires=['fresh', 'commands'], since='0.3.0', timeout=150, must='B44')
    async def test_the_first_command_timeout_starts_after_creation(self, fresh_backend: Factory) -> None:
        """`run(timeout=)` starts its clock once the sandbox is ready: creating the environment does not count."""
        await _first_command_meets_a_short_timeout(supplied(fresh_backend, 'fresh'), 'a fresh backend', 'creating')

    @rule(area='lifecycle', level='extended', requires=['attach', 'commands'], since='0.3.0', timeout=150, must='B44')
    async def test_the_first_command_timeout_starts_after_attaching(
        self, backend: WorkspaceBackend, attach_backend: Attach | None
    ) -> None:
        """`run(timeout=)` of a backend attached by ref starts its clock once connected: attaching does not count."""
        attach_backend = supplied(attach_backend, 'attach')
        await backend.working_dir()
        ref = backend.ref
        assert isinstance(ref, WorkspaceRef), f'the backend had the ref {ref!r} after an operation'
        await _first_command_meets_a_short_timeout(
            lambda: attach_backend(ref), 'a backend attached by ref', 'attaching'
        )

    @rule(area='lifecycle', level='extended', requires=['fresh', 'attach', 'filesystem'], since='0.3.0', must='B11')
    async def test_dropping_a_backend_keeps_its_environment(
        self, fresh_backend: Factory, attach_backend: Attach | None
    ) -> None:
        """A backend object that goes away leaves its environment: a backend attached by its ref finds its files."""
        fresh_backend, attach_backend = supplied(fresh_backend, 'fresh'), supplied(attach_backend, 'attach')
        # Relative: the write is the fresh backend's first operation, and the attached backend resolves it the same.
        mark = f'{SCRATCH_PREFIX}dropped-{uuid.uuid4().hex[:12]}'
        payload = f'left by a dropped backend {uuid.uuid4().hex}'.encode()
        attached, dropped = await _marked_attached_and_dropped(fresh_backend, attach_backend, mark, payload)
        gc.collect()
        if dropped() is not None:
            skip(
                'runner',
                'the backend the rule dropped is still referenced (does the `fresh_backend` factory keep what it '
                'builds? keep their refs for cleanup instead), so its going away cannot be observed',
            )
        workspace = Workspace(attached)
        try:
            try:
                data = await workspace.read_bytes(mark)
            except Exception as error:
                raise AssertionError(
                    f'once the backend that wrote {mark!r} was dropped and collected, a backend attached by its ref '
                    f'raised {safe_str(error)} reading it: dropping the object destroyed its environment'
                ) from error
            assert data == payload, f'once the backend that wrote it was dropped, {mark!r} read back {data!r}'
        finally:
            await _remove_quietly(workspace, mark)


def _armed(inject_fault: InjectFault, backend: WorkspaceBackend, kind: FaultKind) -> type[BaseException]:
    """Arm the fault `kind` on the user's own backend, or skip: the fixture cannot inject that kind."""
    raised: object = inject_fault(unwrap(backend), kind)
    if raised is None:
        skip('fixture-missing', f'`inject_fault` cannot inject a {kind!r} fault into this backend')
    if not (isinstance(raised, type) and issubclass(raised, BaseException)):
        if inspect.iscoroutine(raised):
            raised.close()  # an async fixture's coroutine: closed, so no "never awaited" warning buries the error
        raise ConformanceConfigError(
            f'inject_fault(backend, {kind!r}) returned {raised!r}: return the exception type the armed fault raises '
            '(or None), from a plain function, not an async one'
        )
    if issubclass(WorkspaceError, raised):
        raise ConformanceConfigError(
            f'inject_fault(backend, {kind!r}) returned {raised.__name__}, which every WorkspaceError is too, so a '
            "backend that wraps the fault would pass unseen: return the provider SDK's own error type"
        )
    return raised
