"""Mutants of the doubles (the in-memory reference model, the provider model), where the local mutants cannot reach."""

from __future__ import annotations

import posixpath
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai.workspaces import CommandResult, FileEntry, WorkspaceBackend, WorkspaceRef, WorkspaceUnavailableError

from workspace_conformance.doubles import InMemoryBackend, InMemoryProvider
from workspace_conformance.doubles.forwarding import RunCall
from workspace_conformance.doubles.provider import ProviderBackend, ProviderCommandsBackend
from workspace_conformance.targets.doubles import inject_provider_fault

from ..registry import breaks_in_memory, in_memory, mutant


@breaks_in_memory(
    kills=['realpath_and_entries_follow_symlinks'],
    bug='A filesystem-only backend normalizes `..` as text before resolving links, so `link/..` climbs from the link.',
)
class MemoryCollapsesDotdotAsText(InMemoryBackend):
    """Collapses `..` as text before following links, so `link/..` never climbs from the link's target."""

    async def realpath(self, path: str) -> str:
        return await super().realpath(posixpath.normpath(path))


@breaks_in_memory(
    kills=['symlink_loop_does_not_break_listing', 'realpath_and_entries_follow_symlinks'],
    bug='A storage API that lists only files and directories hides every symlink, loops included.',
)
class MemoryListingDropsLinks(InMemoryBackend):
    """Lists only real files and directories: symlinks (and so loops) vanish from listings."""

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)
        node = self.tree.node(path)
        kinds = getattr(node, 'children', {})
        return tuple(entry for entry in entries if type(kinds.get(entry.name)).__name__ != 'Symlink')


@breaks_in_memory(
    kills=['writes_go_through_a_symlink'],
    bug='An object-store backend writes by replacing whatever is at the path, so a symlink becomes a plain file.',
)
class MemoryWriteReplacesLinks(InMemoryBackend):
    """`write_bytes` to a symlink deletes the link and writes a new file in its place (an object store's put)."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        parent = self.tree.node(posixpath.dirname(path))
        children = getattr(parent, 'children', {})
        if type(children.get(posixpath.basename(path))).__name__ == 'Symlink':
            del children[posixpath.basename(path)]
        await super().write_bytes(path, data)


class UnlockedProviderBackend(ProviderBackend):
    """The provider's backend without its get-or-create lock: concurrent first uses each create an environment."""

    async def working_dir(self) -> str:
        if self._ref is None:
            self._ref = await self.provider.create()
            self._connected = True
        return await super().working_dir()


def _racing_provider(run_dir: Path) -> WorkspaceBackend:
    return UnlockedProviderBackend(InMemoryProvider(create_latency=0.02), None)


mutant(
    name='provider_without_creation_lock',
    kills=['concurrent_first_use_shares_one_environment'],
    bug='A provider SDK wrapper checks for an environment and creates one without a lock, racing itself.',
    backend=lambda run_dir: InMemoryBackend(),
    fresh_backend=_racing_provider,
)


mutant(
    name='files_in_the_python_object',
    kills=['bytes_round_trip_and_write_creates_parents', 'make_dir_creates_parents_and_is_idempotent'],
    bug='The backend keeps its files in the Python object, so a backend rebuilt from its ref (durable) has none.',
    backend=in_memory(InMemoryBackend),
    attach_backend=lambda run_dir, ref: InMemoryBackend(ref=ref, lazy=False),
    rebuild_per_call=True,
)


class ConvertsProviderErrors(ProviderCommandsBackend):
    """Turns every error of its provider client into `WorkspaceUnavailableError`, so none looks retryable."""

    async def _environment(self) -> Any:
        try:
            return await super()._environment()
        except WorkspaceUnavailableError:
            raise
        except Exception as error:
            raise WorkspaceUnavailableError(f'the sandbox is unreachable: {error}') from error


class RecordsTheRefAfterSetup(ProviderCommandsBackend):
    """Creates, sets up, and only then records the ref: a setup that fails loses the environment it made."""

    async def _environment(self) -> Any:
        if self._ref is None:
            created = await self.provider.create()
            await self.provider.set_up(created)
            self._ref = created
        return await super()._environment()


def _provider_of(kind: type[ProviderBackend]) -> Callable[[Path], WorkspaceBackend]:
    """A build of `kind` over its own `InMemoryProvider` of local directories in the run's directory."""

    def build(run_dir: Path) -> WorkspaceBackend:
        return kind(InMemoryProvider(local_root=run_dir / kind.__name__), None)

    build.__name__ = kind.__name__
    return build


mutant(
    name='provider_errors_become_unavailable',
    kills=['a_provider_s_transient_error_reaches_the_caller_unchanged'],
    bug="A backend wraps its SDK's dropped-connection error in WorkspaceUnavailableError, which no engine retries.",
    fresh_backend=_provider_of(ConvertsProviderErrors),
    inject_fault=inject_provider_fault,
)

mutant(
    name='ref_recorded_after_setup',
    kills=['a_setup_failing_right_after_the_create_leaves_the_ref'],
    bug='A backend records the ref only once its setup after the create succeeds, so a failed setup leaks the sandbox.',
    fresh_backend=_provider_of(RecordsTheRefAfterSetup),
    inject_fault=inject_provider_fault,
)


_SESSIONS: dict[str, anyio.Semaphore] = {}
"""One exec session per environment, as a provider that allows one at a time (keyed by the environment's id)."""


class HoldsTheSessionOfACancelledCall(ProviderCommandsBackend):
    """Takes the environment's one exec session for each command and gives it back only when the command returns."""

    async def _take_run(self, call: RunCall) -> CommandResult:
        assert self._ref is not None or await self.working_dir()
        assert self._ref is not None
        session = _SESSIONS.setdefault(self._ref.id, anyio.Semaphore(1))
        await session.acquire()
        result = await super()._take_run(call)
        session.release()  # not in a `finally`: a caller cancelled mid-command never gives the session back
        return result


def _session_provider() -> tuple[Callable[[Path], WorkspaceBackend], Callable[[Path, WorkspaceRef], WorkspaceBackend]]:
    """The mutant's shared backend and its attach, over one provider per run directory."""
    providers: dict[Path, InMemoryProvider] = {}

    def provider(run_dir: Path) -> InMemoryProvider:
        made = providers.setdefault(run_dir, InMemoryProvider(local_root=run_dir / 'sessions'))
        made._backend_class = lambda: HoldsTheSessionOfACancelledCall  # type: ignore[method-assign]
        return made

    return (lambda run_dir: provider(run_dir).backend()), (lambda run_dir, ref: provider(run_dir).attach(ref))


_SESSION_BACKEND, _SESSION_ATTACH = _session_provider()
mutant(
    name='cancelled_call_keeps_the_session',
    kills=['a_call_abandoned_halfway_leaves_the_environment_to_the_next_worker'],
    bug="A backend holds the provider's one exec session until a command returns, so a call cut off halfway never "
    'gives it back and the next worker waits forever.',
    fresh_backend=_SESSION_BACKEND,
    attach_backend=_SESSION_ATTACH,
)


def _stoppable(kind: type[InMemoryProvider]) -> dict[str, Any]:
    """A mutant's fixtures over a `kind` of provider, one per run directory: backends, attach, stop and start."""
    providers: dict[Path, InMemoryProvider] = {}

    def provider(run_dir: Path) -> InMemoryProvider:
        return providers.setdefault(run_dir, kind(local_root=run_dir / kind.__name__))

    def owner(backend: WorkspaceBackend) -> InMemoryProvider:
        assert isinstance(backend, ProviderBackend), backend
        return backend.provider

    async def stop(backend: WorkspaceBackend) -> None:
        await owner(backend).stop(backend)

    async def start(backend: WorkspaceBackend) -> None:
        await owner(backend).start(backend)

    return {
        'destructive_backend': lambda run_dir: provider(run_dir).backend(),
        'attach_backend': lambda run_dir, ref: provider(run_dir).attach(ref),
        'stop_environment': stop,
        'start_environment': start,
    }


class AnswersAfterItsInitDied(InMemoryProvider):
    """Reaches an environment's storage whether or not its init still runs."""

    def lookup(self, ref: WorkspaceRef) -> WorkspaceBackend:
        stopped, self.stopped = self.stopped, set()
        try:
            return super().lookup(ref)
        finally:
            self.stopped = stopped


mutant(
    name='answers_after_its_init_died',
    kills=['an_environment_whose_init_died_raises_unavailable_in_time'],
    bug="A backend answers from a sandbox's storage after the sandbox's init died, so calls on a dead sandbox read "
    'as success.',
    **_stoppable(AnswersAfterItsInitDied),
)


class WaitsOnAStoppedEnvironment(ProviderCommandsBackend):
    """Waits for a stopped environment to come back, however long that takes."""

    async def _environment(self) -> Any:
        if self._ref is not None and self._ref.id in self.provider.stopped:
            await anyio.sleep_forever()
        return await super()._environment()


class WaitsProvider(InMemoryProvider):
    def _backend_class(self) -> type[ProviderBackend]:
        return WaitsOnAStoppedEnvironment


mutant(
    name='waits_on_a_dead_sandbox',
    kills=['an_environment_whose_init_died_raises_unavailable_in_time'],
    bug="A backend's SDK retries a call on a sandbox whose init died until the sandbox comes back, which it never "
    'does.',
    **_stoppable(WaitsProvider),
)


class ResumesEmpty(InMemoryProvider):
    """Starts a stopped environment from its image again: the same ref, none of the files."""

    async def start(self, target: WorkspaceRef | WorkspaceBackend) -> None:
        await super().start(target)
        root = Path(self._known(target, 'start'))
        await anyio.to_thread.run_sync(_empty, root)


def _empty(root: Path) -> None:
    for path in root.iterdir():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


mutant(
    name='resumes_with_an_empty_filesystem',
    kills=['a_backend_attached_after_a_restart_finds_the_files_written_before'],
    bug='A sandbox started again after a stop comes back from its image under the same ref, its files gone.',
    **_stoppable(ResumesEmpty),
)
