"""What a certification target is: how to build its backends, what it needs, and its documented limits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

__all__ = ('Target', 'TargetError')


class TargetError(Exception):
    """A target cannot be loaded or run here; the message is one line saying what is wrong."""


@dataclass(frozen=True, kw_only=True)
class Target:
    """Everything needed to certify one backend; each factory receives the run's own scratch directory."""

    name: str
    description: str
    backend: Callable[[Path], WorkspaceBackend]
    fresh_backend: Callable[[Path], WorkspaceBackend] | None = None
    destructive_backend: Callable[[Path], WorkspaceBackend] | None = None
    attach_backend: Callable[[Path, WorkspaceRef], WorkspaceBackend] | None = None
    destroy_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    declared_limits: Mapping[str, str] = field(default_factory=dict)
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    switches: Mapping[str, bool] = field(default_factory=dict)
    """Values for the suite's switch fixtures (`has_real_posix_shell`, ...); absent ones keep their defaults."""
