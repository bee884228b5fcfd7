"""The `windows` and `memory-windows` targets: a 'windows' workspace (pydantic-ai >= 2.78), real or a double.

`windows` is pydantic-ai's WindowsWorkspaceBackend in a temporary directory; it runs only on a Windows host (the CI
templates' `windows-latest` job), and nothing in this project's own CI runs it. `memory-windows` is
`WindowsMemoryBackend`, which keeps Windows path rules in memory and scripts its few commands, so the platform logic
of the suites is certified anywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import pydantic_ai.workspaces
from pydantic_ai.workspaces import WorkspaceBackend

from ..doubles.windows import WindowsMemoryBackend
from ..engine._versions import pydantic_ai_version
from .base import NamedTarget, Target
from .claims import IN_PROCESS_DOUBLE, LOCAL_CLAIMS
from .local import sacrificial_directory, shared_directory

__all__ = ('MEMORY_WINDOWS', 'WINDOWS')


def _memory_windows(_: Mapping[str, str], run_id: str) -> Target:
    return Target(
        name='memory-windows',
        description="WindowsMemoryBackend: a 'windows' workspace in memory, Windows path rules, scripted commands",
        backend=lambda _: WindowsMemoryBackend(),
        fresh_backend=lambda _: WindowsMemoryBackend(),
        isolation_source=IN_PROCESS_DOUBLE.source,
    )


def _windows_backend(directory: Path) -> WorkspaceBackend:
    backend: WorkspaceBackend = pydantic_ai.workspaces.WindowsWorkspaceBackend(directory)
    return backend


def _windows(_: Mapping[str, str], run_id: str) -> Target:
    return Target(
        name='windows',
        description="pydantic-ai's WindowsWorkspaceBackend (PowerShell) in a temporary directory",
        backend=lambda run_dir: _windows_backend(shared_directory(run_dir)),
        destructive_backend=lambda run_dir: _windows_backend(sacrificial_directory(run_dir)),
        isolation_source=LOCAL_CLAIMS.source,
    )


def _platforms_missing(_: Mapping[str, str]) -> str | None:
    if not hasattr(pydantic_ai.workspaces, 'SupportsPlatform'):
        return f"pydantic-ai-slim {pydantic_ai_version()} knows no 'windows' workspace (2.78 added platforms)"
    return None


def _windows_missing(_: Mapping[str, str]) -> str | None:
    if not hasattr(pydantic_ai.workspaces, 'WindowsWorkspaceBackend'):
        return f'pydantic-ai-slim {pydantic_ai_version()} has no WindowsWorkspaceBackend (2.78 added it)'
    if sys.platform != 'win32':
        return f'WindowsWorkspaceBackend runs only on a Windows host, and this is {sys.platform}'
    return None


MEMORY_WINDOWS = NamedTarget(
    name='memory-windows',
    description="WindowsMemoryBackend, a 'windows' workspace double (pydantic-ai >= 2.78): Windows paths in memory",
    build=_memory_windows,
    missing=_platforms_missing,
)

WINDOWS = NamedTarget(
    name='windows',
    description="pydantic-ai's WindowsWorkspaceBackend (pydantic-ai >= 2.78), on a Windows host only",
    build=_windows,
    missing=_windows_missing,
)
