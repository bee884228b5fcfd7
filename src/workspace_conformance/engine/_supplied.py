"""The workspace a capability supplies: how a rule (or a guard resolving `requires`) asks for it, and names it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage
from pydantic_ai.workspaces import Workspace, WorkspaceBackend, WorkspaceRef

from .._frames import machinery_hidden

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'accepted',
    'described',
    'first_use',
    'layer_names',
    'own_environment',
    'ref_text',
    'run_context',
    'select',
    'select_some',
)


def run_context(deps: object) -> RunContext[Any]:
    """A run context like the one an agent run gives `get_workspace` before the run starts."""
    return RunContext(deps=deps, model=TestModel(), usage=RunUsage())


def described(selected: object) -> str:
    """`ReadOnlyWorkspace>LocalWorkspaceBackend with ref local:/x`, for failure messages."""
    if selected is None:
        return 'None'
    ref = getattr(selected, 'ref', None)
    named = f'{ref.provider}:{ref.id}' if isinstance(ref, WorkspaceRef) else repr(ref)
    return f'{layer_names(selected)} with ref {named[:300]}'


def layer_names(selected: object) -> str:
    """`ReadOnlyWorkspace>LocalWorkspaceBackend`: the classes of its layers and its backend, outermost first."""
    layers: list[str] = []
    layer: object = selected
    while isinstance(layer, Workspace):
        if type(layer) is not Workspace:
            layers.append(type(layer).__name__)
        layer = layer._backend  # the layers are what a failure must name
    layers.append(type(layer).__name__)
    return '>'.join(layers)


def ref_text(ref: WorkspaceRef) -> str:
    """`WorkspaceRef(provider=..., id=...)` with a long id clipped, for failure messages."""
    shown = ref.id if len(ref.id) <= 80 else f'{ref.id[:60]}...({len(ref.id)} characters)'
    return f'WorkspaceRef(provider={ref.provider!r}, id={shown!r})'


def select(capability: AbstractCapability[Any], deps: object, ref: WorkspaceRef | None) -> Workspace | None:
    """What `get_workspace` supplies for `ref`, as the `Workspace` a run's tools would get, or None."""
    selected = capability.get_workspace(run_context(deps), ref=ref)
    if selected is None or isinstance(selected, Workspace):
        return selected
    if not isinstance(selected, WorkspaceBackend):
        raise AssertionError(f'get_workspace(ref={ref!r}) returned {selected!r}, neither a backend nor None')
    return Workspace(selected)


def select_some(capability: AbstractCapability[Any], deps: object, ref: WorkspaceRef | None) -> Workspace:
    """What `get_workspace` supplies for `ref`; failing the rule when it supplies nothing."""
    selected = select(capability, deps, ref)
    if selected is None:
        raise AssertionError(f'get_workspace(ref={ref!r}) returned None: the capability supplies no workspace')
    return selected


def own_environment(capability: AbstractCapability[Any], deps: object) -> Workspace:
    """The workspace `get_workspace(ref=None)` supplies, as a run starting fresh would get it."""
    return select_some(capability, deps, None)


async def first_use(workspace: Workspace) -> WorkspaceRef:
    """Make the workspace's first operation (creating or attaching) and return its ref, which must now be set."""
    await workspace.working_dir()
    ref = workspace.ref
    if not isinstance(ref, WorkspaceRef):
        raise AssertionError(f'after its first operation the workspace reports ref {ref!r}, not a WorkspaceRef')
    return ref


def accepted(capability: AbstractCapability[Any], deps: object, refs: Sequence[WorkspaceRef]) -> list[str]:
    """The refs of `refs` that `get_workspace` attached to instead of declining (None) or raising, with what it gave."""
    found: list[str] = []
    for ref in refs:
        try:
            selected = capability.get_workspace(run_context(deps), ref=ref)
        except Exception:
            continue  # a clear error declines it too
        if selected is not None:
            found.append(f'accepted {ref_text(ref)}: get_workspace returned {described(selected)}')
    return found
