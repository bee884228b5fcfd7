"""The `memory` and `provider` targets: this toolkit's own test doubles, certified like any backend."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from ..doubles import InMemoryBackend, InMemoryProvider, memory_symlink
from ..doubles.provider import ProviderBackend
from .base import CapabilitySetup, NamedTarget, Target
from .claims import IN_PROCESS_DOUBLE

__all__ = ('MEMORY', 'PROVIDER', 'inject_provider_fault')


def _memory(_: Mapping[str, str], run_id: str) -> Target:
    return Target(
        name='memory',
        description='InMemoryBackend: files only, no commands',
        backend=lambda _: InMemoryBackend(),
        fresh_backend=lambda _: InMemoryBackend(),
        make_symlink=memory_symlink,
        isolation_source=IN_PROCESS_DOUBLE.source,
    )


def _provider(_: Mapping[str, str], run_id: str) -> Target:
    providers: dict[Path, InMemoryProvider] = {}

    def provider(run_dir: Path) -> InMemoryProvider:
        # One provider per event loop's directory: attach and destroy must reach the environments it created.
        return providers.setdefault(run_dir, InMemoryProvider(local_root=run_dir / 'provider', create_latency=0.02))

    def attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        return provider(run_dir).attach(ref)

    def owner(backend: WorkspaceBackend) -> InMemoryProvider:
        ref = backend.ref
        found = next((p for p in providers.values() if ref is not None and ref.id in p.environments), None)
        if found is None:
            raise ValueError(f'no provider environment behind {ref!r}')
        return found

    async def destroy(backend: WorkspaceBackend) -> None:
        await owner(backend).destroy(backend)

    async def stop(backend: WorkspaceBackend) -> None:
        await owner(backend).stop(backend)

    async def start(backend: WorkspaceBackend) -> None:
        await owner(backend).start(backend)

    return Target(
        name='provider',
        description='InMemoryProvider on local directories: lazy creation, attach by ref, stop and start, destroy',
        backend=lambda run_dir: provider(run_dir).backend(),
        fresh_backend=lambda run_dir: provider(run_dir).backend(),
        attach_backend=attach,
        destroy_environment=destroy,
        stop_environment=stop,
        start_environment=start,
        inject_fault=inject_provider_fault,
        capability=_provider_capability,
        isolation_source=IN_PROCESS_DOUBLE.source,
    )


MEMORY = NamedTarget(
    name='memory',
    description='InMemoryBackend, the in-memory test double (files only; command rules are not applicable)',
    build=_memory,
)

PROVIDER = NamedTarget(
    name='provider',
    description='InMemoryProvider, the provider-lifecycle test double, on local directories',
    build=_provider,
)


def _provider_capability(run_dir: Path) -> CapabilitySetup:
    """`InMemoryProvider.capability()` over local directories in the rule's scratch directory."""
    provider = InMemoryProvider(local_root=run_dir / 'environments', files={'README': b'hello'})
    return CapabilitySetup(capability=provider.capability(), destroy_environment=provider.destroy)


def inject_provider_fault(backend: WorkspaceBackend, kind: str) -> type[BaseException] | None:
    """The suite's `inject_fault` for the provider double: armed on the provider behind the backend."""
    if not isinstance(backend, ProviderBackend):
        raise TypeError(f'inject_fault is for the provider double, not {type(backend).__qualname__}')
    return backend.provider.arm(kind)
