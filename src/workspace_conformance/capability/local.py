"""Rules on `LocalWorkspace` and its subclasses: the options name the layers, and a later namesake replaces it whole."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.workspaces import (
    LocalWorkspaceBackend,
    ReadOnlyWorkspace,
    Workspace,
    WorkspaceRef,
)
from pydantic_ai.workspaces.workspace import workspace_layers

from ..authoring import described, own_environment, rule
from ._shared import shape
from ._support import script_one_tool_call

__all__ = ('LocalRules',)


def _authority_layer() -> tuple[type[object], ...]:
    """`AuthorityWorkspace`, or nothing on a pydantic-ai before 2.68, whose `LocalWorkspace` has no authority."""
    try:
        from pydantic_ai.workspaces import AuthorityWorkspace
    except ImportError:
        return ()
    return (AuthorityWorkspace,)


def _expected_layers(capability: LocalWorkspace[Any]) -> list[type[object]]:
    """The layers `LocalWorkspace`'s options promise, outermost first (its docs: read_only, then authority)."""
    layers: list[type[object]] = []
    if getattr(capability, 'authority', 'operator') != 'operator' or getattr(capability, 'path_authority', None):
        layers.extend(_authority_layer())
    if capability.read_only:
        layers.append(ReadOnlyWorkspace)
    return layers


async def _supplied_in_a_run(capabilities: list[AbstractCapability[Any]], **run: Any) -> Workspace:
    """The workspace a tool of an agent built with `capabilities` gets, after its first operation."""
    agent: Agent[Any, str] = Agent(FunctionModel(script_one_tool_call), capabilities=capabilities)
    seen: list[Workspace] = []

    @agent.tool
    async def act(ctx: RunContext[Any]) -> str:
        await ctx.workspace.working_dir()
        seen.append(ctx.workspace)
        return 'ok'

    await agent.run('use the workspace', **run)
    assert seen, 'the agent run finished without calling its tool'
    return seen[0]


class LocalRules:
    """Rules on a `LocalWorkspace` capability's options and on composing it with another under its `id`."""

    @rule(area='policies', requires=['local_workspace'], must='C13')
    async def test_local_workspace_options_name_its_layers(self, capability: LocalWorkspace[Any], deps: object) -> None:
        """`read_only` wraps a `ReadOnlyWorkspace`, a lower `authority` an `AuthorityWorkspace`, over its directory."""
        local = capability
        workspace = own_environment(capability, deps)
        layers = [kind for kind in workspace_layers(workspace)[:-1] if kind in (*_authority_layer(), ReadOnlyWorkspace)]
        promised = [kind.__name__ for kind in _expected_layers(local)]
        assert layers == _expected_layers(local), (
            f'LocalWorkspace(read_only={local.read_only}, authority={getattr(local, "authority", None)!r}) supplied '
            f'{described(workspace)}: its options promise the layers {promised}'
        )
        assert workspace.read_only == local.read_only, (
            f'LocalWorkspace(read_only={local.read_only}) supplied a workspace reporting read_only '
            f'{workspace.read_only}'
        )
        beneath = workspace.backend
        own = WorkspaceRef(provider='local', id=str(local.working_dir))
        assert isinstance(beneath, LocalWorkspaceBackend) and beneath.ref == own, (
            f'LocalWorkspace({own.id!r}) supplied {described(workspace)}, not a backend on its directory'
        )

    @rule(area='selection', requires=['local_workspace'], must='C12')
    async def test_a_later_namesake_replaces_the_earlier_whole(
        self, capability: LocalWorkspace[Any], deps: object, tmp_path: Path
    ) -> None:
        """Under one `id` a later `LocalWorkspace` wins whole, keeping no earlier option; distinct ids keep both."""
        local = capability
        other = tmp_path / 'earlier-namesake'
        other.mkdir()
        options: dict[str, object] = {'read_only': not local.read_only, 'env': {'WC_EARLIER_ONLY': '1'}}
        if _authority_layer():  # pydantic-ai 2.68 and later
            options |= {'authority': 'none', 'path_authority': {str(other / 'notes'): 'none'}}
        earlier = dataclasses.replace(local, working_dir=other, **options)  # type: ignore[arg-type]
        expected = shape(own_environment(capability, deps))
        composed = await _supplied_in_a_run([earlier, capability], deps=deps)
        assert shape(composed) == expected, (
            f'an agent built with another {type(local).__name__} of the same id before this one ran in '
            f'{described(composed)}: options of the earlier one carried over (combine merged them instead of '
            'keeping the later whole)'
        )
        kept = dataclasses.replace(earlier, id='workspace-conformance-other')
        theirs = WorkspaceRef(provider='local', id=str(kept.working_dir))
        reached = await _supplied_in_a_run([capability, kept], deps=deps, workspace=theirs)
        assert reached.ref == theirs, (
            f'with a second {type(local).__name__} under another id, a run given its ref ran in {described(reached)}: '
            'distinct ids must keep both'
        )
