"""Helpers more than one capability area uses: policy layers, a selection's shape, a marked run."""

from __future__ import annotations

from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.workspaces import Workspace, WorkspaceRef, WrapperWorkspace
from pydantic_ai.workspaces.workspace import workspace_layers

from ._support import Mark, leave_mark, run_in_agent

__all__ = ('marked_run', 'shape', 'stacked', 'stored')


def stacked(workspace: Workspace) -> Workspace:
    """`workspace` inside two more wrappers: pydantic-ai's `AuthorityWorkspace` (2.68) between plain layers."""
    try:
        from pydantic_ai.workspaces import AuthorityWorkspace
    except ImportError:  # pydantic-ai before 2.68 has no AuthorityWorkspace: two plain layers
        return _Layer(_Layer(workspace))
    return _Layer(AuthorityWorkspace(_Layer(workspace), authority='none'))


class _Layer(WrapperWorkspace):
    """A policy layer of the user's that adds nothing, stacked around the capability's workspace."""


def shape(workspace: Workspace) -> tuple[object, ...]:
    """What two selections must share: the wrapper layers, the ref, and each layer's durable policy."""
    policies: list[tuple[object, ...]] = []
    layer: object = workspace
    while isinstance(layer, Workspace):
        policies.append(layer.durable_policy())
        layer = layer._backend
    return (tuple(workspace_layers(workspace)), workspace.ref, tuple(policies))


async def marked_run(capability: AbstractCapability[Any], deps: object) -> tuple[Mark, WorkspaceRef, Any]:
    """A first run that leaves a mark in its workspace: the mark, the run's ref and its result."""
    mark, result = await run_in_agent(capability, leave_mark, deps=deps)
    ref = result.workspace.ref
    assert isinstance(ref, WorkspaceRef), f'a run that used its workspace ended with result.workspace.ref {ref!r}'
    return mark, ref, result


def stored(result: Any) -> list[ModelMessage]:
    """The run's messages after a JSON round trip, as an application stores them."""
    return ModelMessagesTypeAdapter.validate_json(result.all_messages_json())
