"""The `bubblewrap` target: pydantic-ai-harness's `BubblewrapWorkspace` around a local directory."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace, WorkspaceBackend, WorkspaceRef

from ._probe import missing_module, missing_program, probe
from .base import NamedTarget, Target
from .local import LazyLocalBackend, destroy_local_environment, sacrificial_directory, shared_directory

__all__ = ('BUBBLEWRAP',)

_PROBE = ['bwrap', '--unshare-user', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true']


def _missing(_: Mapping[str, str]) -> str | None:
    absent = missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_program(
        'bwrap', 'bubblewrap'
    )
    if absent:
        return absent
    works, why = probe(_PROBE)
    return None if works else f'bwrap cannot start a sandbox here (user namespaces?): {why}'


def _target(_: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.bubblewrap_sandbox import BubblewrapWorkspace

    def sandbox(backend: WorkspaceBackend) -> WorkspaceBackend:
        sandboxed: WorkspaceBackend = BubblewrapWorkspace(Workspace(backend))
        return sandboxed

    def attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        inner = LazyLocalBackend(run_dir / 'fresh', ref=ref) if ref.provider == 'local-lazy' else None
        return sandbox(inner or LocalWorkspaceBackend(ref.id))

    return Target(
        name='bubblewrap',
        description="pydantic-ai-harness's BubblewrapWorkspace around LocalWorkspaceBackend, no network",
        backend=lambda run_dir: sandbox(LocalWorkspaceBackend(shared_directory(run_dir))),
        fresh_backend=lambda run_dir: sandbox(LazyLocalBackend(run_dir / 'fresh')),
        destructive_backend=lambda run_dir: sandbox(LocalWorkspaceBackend(sacrificial_directory(run_dir))),
        attach_backend=attach,
        destroy_environment=destroy_local_environment,
    )


BUBBLEWRAP = NamedTarget(
    name='bubblewrap',
    description="pydantic-ai-harness's BubblewrapWorkspace (bwrap) around a local directory",
    build=_target,
    missing=_missing,
    extra='harness',
)
