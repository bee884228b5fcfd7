"""`InMemoryProvider`: a model of a remote sandbox provider's lifecycle, honouring every lifecycle clause."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
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
    WorkspaceRef,
    WorkspaceUnavailableError,
)

from ._names import PROVIDER
from .capability import ProviderCapability
from .forwarding import RunCall, TakesRunCalls
from .memory import InMemoryBackend

__all__ = (
    'PROVIDER',
    'InMemoryProvider',
    'ProviderBackend',
    'ProviderCommandsBackend',
    'ProviderSetupError',
    'ProviderTransientError',
)


class ProviderTransientError(Exception):
    """The provider SDK's own error for a dropped connection or a 503: a durable engine retries it."""


class ProviderSetupError(Exception):
    """The provider SDK's error when the setup after a create (making the working directory) fails."""


class InMemoryProvider:
    """Environments by ref: `backend()` builds an unconnected backend, `attach(ref)` one for an existing environment.

    Environments are `InMemoryBackend`s, or real directories under `local_root` whose commands run through
    `LocalWorkspaceBackend`. `creations` and `attaches` count what backends asked of the provider, and
    `create_latency` makes each creation take that long, so races and cancellation mid-create are real.
    """

    def __init__(
        self,
        *,
        local_root: Path | None = None,
        create_latency: float = 0.0,
        files: Mapping[str, bytes] | None = None,
        uid: int = 1000,
    ) -> None:
        self.local_root = local_root
        self.create_latency = create_latency
        self.files = dict(files or {})
        self.uid = uid
        self.environments: dict[str, WorkspaceBackend] = {}
        self.destroyed: set[str] = set()
        self.stopped: set[str] = set()
        self.creations = 0
        self.attaches = 0
        self._armed: set[str] = set()

    def arm(self, kind: str) -> type[Exception] | None:
        """Arm one fault, the suite's `inject_fault`: the next call or setup fails once, as a provider SDK fails.

        `'transient'` fails the next call to this provider with `ProviderTransientError`, `'setup'` the setup right
        after the next create with `ProviderSetupError`; another kind is not injected (None).
        """
        kinds: dict[str, type[Exception]] = {'transient': ProviderTransientError, 'setup': ProviderSetupError}
        if kind not in kinds:
            return None
        self._armed.add(kind)
        return kinds[kind]

    def _fired(self, kind: str) -> bool:
        """Whether the fault `kind` was armed, disarming it: each fault fires once."""
        armed = kind in self._armed
        self._armed.discard(kind)
        return armed

    async def set_up(self, ref: WorkspaceRef) -> None:
        """The step after a create that can fail on a real provider (an armed `'setup'` fault fails it)."""
        await anyio.lowlevel.checkpoint()
        if self._fired('setup'):
            raise ProviderSetupError(f'setting up environment {ref.id!r} failed (injected)')

    def backend(self) -> ProviderBackend:
        """A backend with no environment yet: no I/O now, one creation on its first operation."""
        return self._backend_class()(self, None)

    def attach(self, ref: WorkspaceRef) -> ProviderBackend:
        """A backend for the environment `ref` names; it never creates one, and raises if that one is gone."""
        return self._backend_class()(self, ref)

    def capability(self, **switches: bool) -> ProviderCapability:
        """The capability that supplies this provider's environments to agent runs; `switches` break its clauses."""
        return ProviderCapability(self, **switches)  # type: ignore[arg-type]  # keyword-only bools

    def _backend_class(self) -> type[ProviderBackend]:
        return ProviderCommandsBackend if self.local_root is not None else ProviderBackend

    async def destroy(self, target: WorkspaceRef | WorkspaceBackend) -> None:
        """Destroy an environment (by ref, or the one behind a backend): it and every attached backend are gone."""
        ref = target if isinstance(target, WorkspaceRef) else target.ref
        if ref is None or ref.id not in self.environments:
            raise ValueError(f'no environment of this provider to destroy: {ref!r}')
        environment = self.environments.pop(ref.id)
        self.destroyed.add(ref.id)
        if isinstance(environment, InMemoryBackend):
            environment.destroy()
        else:
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(ref.id, ignore_errors=True))

    async def stop(self, target: WorkspaceRef | WorkspaceBackend) -> None:
        """Stop an environment the way its init dying does: calls on it raise until `start`, its files are kept."""
        self.stopped.add(self._known(target, 'stop'))
        await anyio.lowlevel.checkpoint()

    async def start(self, target: WorkspaceRef | WorkspaceBackend) -> None:
        """Start a stopped environment again, with the files it held."""
        self.stopped.discard(self._known(target, 'start'))
        await anyio.lowlevel.checkpoint()

    def _known(self, target: WorkspaceRef | WorkspaceBackend, what: str) -> str:
        ref = target if isinstance(target, WorkspaceRef) else target.ref
        if ref is None or ref.id not in self.environments:
            raise ValueError(f'no environment of this provider to {what}: {ref!r}')
        return ref.id

    async def create(self) -> WorkspaceRef:
        """Create an environment and return its ref (after `create_latency`)."""
        await anyio.sleep(self.create_latency)
        self.creations += 1
        if self.local_root is None:
            environment: WorkspaceBackend = InMemoryBackend(files=self.files, uid=self.uid, lazy=False)
            assert environment.ref is not None
            ref = WorkspaceRef(provider=PROVIDER, id=environment.ref.id)
        else:
            path = await anyio.to_thread.run_sync(self._make_directory)
            environment = LocalWorkspaceBackend(path)
            ref = WorkspaceRef(provider=PROVIDER, id=path)
        self.environments[ref.id] = environment
        return ref

    def _make_directory(self) -> str:
        assert self.local_root is not None
        self.local_root.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix='env-', dir=self.local_root)).resolve()
        for name, data in self.files.items():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_bytes(data)
        return str(path)

    def lookup(self, ref: WorkspaceRef) -> WorkspaceBackend:
        """The environment `ref` names, or `WorkspaceUnavailableError` if it was destroyed or never existed."""
        if self._fired('transient'):
            raise ProviderTransientError('connection reset by peer (injected)')
        environment = self.environments.get(ref.id)
        if environment is None:
            state = 'was destroyed' if ref.id in self.destroyed else 'does not exist'
            raise WorkspaceUnavailableError(f'environment {ref.id!r} {state}')
        if ref.id in self.stopped:
            raise WorkspaceUnavailableError(f'environment {ref.id!r} is stopped: start it again to reach it')
        return environment


class ProviderBackend:
    """A provider's backend: ref `None` until the first operation creates one environment, then fixed."""

    def __init__(self, provider: InMemoryProvider, ref: WorkspaceRef | None) -> None:
        self.provider = provider
        self._ref = ref
        self._attached = ref is not None
        self._lock: anyio.Lock | None = None
        self._connected = False

    @property
    def ref(self) -> WorkspaceRef | None:
        """`None` until created; then the environment's ref, never changed."""
        return self._ref

    async def _environment(self) -> Any:
        if not self._connected:
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:
                if self._ref is None:
                    # Shielded: a caller cancelled mid-create still leaves the ref recorded.
                    with anyio.CancelScope(shield=True):
                        self._ref = created = await self.provider.create()
                    await self.provider.set_up(created)  # recorded first: a failed setup leaves a ref to clean up
                elif not self._connected and self._attached:
                    self.provider.attaches += 1
                self._connected = True
        assert self._ref is not None
        return self.provider.lookup(self._ref)

    async def working_dir(self) -> str:
        return str(await (await self._environment()).working_dir())

    async def read_bytes(self, path: str) -> bytes:
        data: bytes = await (await self._environment()).read_bytes(path)
        return data

    async def write_bytes(self, path: str, data: bytes) -> None:
        await (await self._environment()).write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        entry: FileEntry = await (await self._environment()).stat(path)
        return entry

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries: Sequence[FileEntry] = await (await self._environment()).list_dir(path)
        return entries

    async def make_dir(self, path: str) -> None:
        await (await self._environment()).make_dir(path)

    async def remove(self, path: str) -> None:
        await (await self._environment()).remove(path)

    async def exists(self, path: str) -> bool:
        return bool(await (await self._environment()).exists(path))

    async def realpath(self, path: str) -> str:
        return str(await (await self._environment()).realpath(path))

    async def make_symlink(self, target: str, link: str) -> None:
        """Create a symlink in an in-memory environment (the suite's `make_symlink`)."""
        environment = await self._environment()
        if not isinstance(environment, InMemoryBackend):
            raise TypeError('make_symlink is for in-memory environments; local ones have `ln -s`')
        await environment.make_symlink(target, link)


class ProviderCommandsBackend(TakesRunCalls, ProviderBackend):
    """A provider backend whose environments are local directories, so commands run for real."""

    async def _take_run(self, call: RunCall) -> CommandResult:
        environment = await self._environment()
        result: CommandResult = await call.to(environment.run)
        assert self._ref is not None
        self.provider.lookup(self._ref)  # destroyed while it ran: unavailable, not a normal exit
        return result
