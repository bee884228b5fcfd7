"""Mutants of the `LocalWorkspace` rules: an option that names no layer, and a namesake merged field by field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

from ..registry import capability_mutant
from .capability import _local


@dataclass
class ReadOnlyIgnored(LocalWorkspace[Any]):
    """Hands out its directory's bare backend, whatever `read_only` says."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir)
        return None if ref is not None and ref != backend.ref else backend


capability_mutant(
    name='read_only_option_wraps_nothing',
    kills=['local_workspace_options_name_its_layers'],
    bug='A LocalWorkspace subclass builds the bare backend, so read_only=True supplies a writable workspace.',
    build=_local(ReadOnlyIgnored, read_only=True),
)


@dataclass
class MergedNamesake(LocalWorkspace[Any]):
    """Composes with a namesake by pydantic-ai's default field-by-field merge."""

    @classmethod
    def combine(cls, capabilities: Sequence[AbstractCapability[Any]]) -> AbstractCapability[Any]:
        return AbstractCapability.combine.__func__(cls, capabilities)  # type: ignore[attr-defined, no-any-return]


capability_mutant(
    name='namesakes_merge_field_by_field',
    kills=['a_later_namesake_replaces_the_earlier_whole'],
    bug="combine() merges two LocalWorkspaces field by field, so an earlier one's read_only and authority carry over.",
    build=_local(MergedNamesake),
)
