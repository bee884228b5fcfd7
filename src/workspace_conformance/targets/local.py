"""The `local` target: pydantic-ai's `LocalWorkspaceBackend` in directories the run owns."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import anyio
import anyio.to_thread
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.workspaces import (
    LocalWorkspaceBackend,
    ReadOnlyWorkspace,
    WorkspaceBackend,
    WorkspaceRef,
)

from ..doubles.forwarding import ForwardsFiles
from .base import CapabilitySetup, Target
from .claims import LOCAL_CLAIMS

__all__ = (
    'LAZY_PROVIDER',
    'LazyLocalBackend',
    'destroy_local_environment',
    'local_target',
    'sacrificial_directory',
    'shared_directory',
)

LAZY_PROVIDER = 'local-lazy'


class LazyLocalBackend(ForwardsFiles):
    """A provider-shaped `LocalWorkspaceBackend`: no I/O when built, a new directory on first use.

    `LocalWorkspaceBackend`'s ref exists from construction, so it has no creation to race; this wrapper
    gives the lifecycle rules (concurrent first use, cancellation mid-create, attach by ref) a real
    creation step while every operation still runs through `LocalWorkspaceBackend`.
    """

    def __init__(self, parent: Path, *, ref: WorkspaceRef | None = None) -> None:
        self._parent = parent
        self._ref = ref
        self._local: LocalWorkspaceBackend | None = None
        self._lock: anyio.Lock | None = None

    @property
    def ref(self) -> WorkspaceRef | None:
        """`None` until the first operation creates the directory, then `WorkspaceRef('local-lazy', path)`."""
        return self._ref

    async def _inner(self) -> LocalWorkspaceBackend:
        if self._local is not None:
            return self._local
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._local is None:
                ref = self._ref or await self._create_environment()
                self._local = LocalWorkspaceBackend(ref.id)
        return self._local

    async def _create_environment(self) -> WorkspaceRef:
        # Shielded: a caller cancelled mid-create still leaves the ref recorded.
        with anyio.CancelScope(shield=True):
            created = WorkspaceRef(provider=LAZY_PROVIDER, id=await anyio.to_thread.run_sync(self._create))
            self._ref = created
        return created

    def _create(self) -> str:
        self._parent.mkdir(parents=True, exist_ok=True)
        return str(Path(tempfile.mkdtemp(prefix='env-', dir=self._parent)).resolve())

    async def realpath(self, path: str) -> str:
        return await (await self._inner()).realpath(path)


def sacrificial_directory(run_dir: Path) -> Path:
    """A new directory two levels below a directory of its own, so its ancestors are sacrificial too."""
    (run_dir / 'destructive').mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix='sacrificial-', dir=run_dir / 'destructive')) / 'chain' / 'workspace'
    path.mkdir(parents=True)
    return path


def shared_directory(run_dir: Path) -> Path:
    """The directory of the suite's shared environment under `run_dir`, created if needed."""
    path = run_dir / 'shared'
    path.mkdir(parents=True, exist_ok=True)
    return path


def _attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    if ref.provider == LAZY_PROVIDER:
        return LazyLocalBackend(run_dir / 'fresh', ref=ref)
    return LocalWorkspaceBackend(ref.id)


async def destroy_local_environment(backend: WorkspaceBackend) -> None:
    """Delete the directory behind a local backend's ref, as whoever holds the ref would."""
    ref = backend.ref
    if ref is None:
        raise ValueError('this backend has no environment to destroy yet')
    await anyio.to_thread.run_sync(lambda: shutil.rmtree(ref.id))


def local_target() -> Target:
    """`LocalWorkspaceBackend` with every optional fixture: fresh (lazy wrapper), destructive, attach, destroy."""
    return Target(
        name='local',
        description="pydantic-ai's LocalWorkspaceBackend in a temporary directory",
        backend=lambda run_dir: LocalWorkspaceBackend(shared_directory(run_dir)),
        fresh_backend=lambda run_dir: LazyLocalBackend(run_dir / 'fresh'),
        destructive_backend=lambda run_dir: LocalWorkspaceBackend(sacrificial_directory(run_dir)),
        attach_backend=_attach,
        destroy_environment=destroy_local_environment,
        capability=local_capability,
        isolation_source=LOCAL_CLAIMS.source,
    )


async def _remove_project(ref: WorkspaceRef) -> None:
    await anyio.to_thread.run_sync(lambda: shutil.rmtree(ref.id))


def local_capability(run_dir: Path) -> CapabilitySetup:
    """`LocalWorkspace` on a project directory of its own, which `destroy_environment` removes."""
    project = run_dir / 'project'
    project.mkdir(parents=True, exist_ok=True)
    (project / 'README').write_text('a project\n')
    return CapabilitySetup(
        capability=LocalWorkspace(project), destroy_environment=_remove_project, policy=ReadOnlyWorkspace
    )
