"""The `local-shell` target: `LocalWorkspaceBackend`'s commands only, so files go through the shell filesystem."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic_ai.workspaces import (
    LocalWorkspaceBackend,
    Workspace,
    WorkspaceBackend,
    WorkspaceRef,
)

from ..doubles.shapes import CommandsOnly
from .base import NamedTarget, Target
from .claims import LOCAL_CLAIMS
from .local import LazyLocalBackend, destroy_local_environment, sacrificial_directory, shared_directory

__all__ = ('LOCAL_SHELL', 'CommandsOnly')


def _shell_workspace(backend: LocalWorkspaceBackend | LazyLocalBackend) -> WorkspaceBackend:
    return Workspace(CommandsOnly(backend))


def _attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    if ref.provider == 'local-lazy':
        return _shell_workspace(LazyLocalBackend(run_dir / 'fresh', ref=ref))
    return _shell_workspace(LocalWorkspaceBackend(ref.id))


def _target(_: Mapping[str, str], run_id: str) -> Target:
    return Target(
        name='local-shell',
        description="LocalWorkspaceBackend's commands only, files through pydantic-ai's shell-derived filesystem",
        backend=lambda run_dir: _shell_workspace(LocalWorkspaceBackend(shared_directory(run_dir))),
        fresh_backend=lambda run_dir: _shell_workspace(LazyLocalBackend(run_dir / 'fresh')),
        destructive_backend=lambda run_dir: _shell_workspace(LocalWorkspaceBackend(sacrificial_directory(run_dir))),
        attach_backend=_attach,
        destroy_environment=destroy_local_environment,
        isolation_source=LOCAL_CLAIMS.source,
    )


LOCAL_SHELL = NamedTarget(
    name='local-shell',
    description="LocalWorkspaceBackend's commands only, so files go through the shell-derived filesystem",
    build=_target,
)
