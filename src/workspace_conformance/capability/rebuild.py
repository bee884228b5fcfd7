"""Rules of durable rebuild: each operation through a workspace freshly rebuilt from its ref by `get_workspace`.

Under durable execution every workspace call rebuilds the workspace from the run's ref through the capabilities, so
nothing an operation did may live only in the Python object that made it; on an engine whose units run on another
worker (Temporal), the rebuild gets only the run context that crossed to the worker.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pydantic_core
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.durable_exec import DurabilityEngineSpec, DurableRunContext
from pydantic_ai.exceptions import UserError
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.workspaces import Workspace, WorkspaceBackend, WorkspaceRef

from ..authoring import described, first_use, own_environment, ref_text, rule, select
from ._shared import shape
from ._support import MARK_PREFIX, error_text, script_one_tool_call

__all__ = ('RebuildRules', 'Rebuilt', 'rebuilt')


class Rebuilt:
    """A workspace whose every operation goes through `get_workspace(ctx, ref=ref)` called anew, as durable units do."""

    def __init__(self, capability: AbstractCapability[Any], deps: object, ref: WorkspaceRef) -> None:
        self.capability = capability
        self.deps = deps
        self.ref = ref
        self.shapes: list[tuple[object, ...]] = []

    def fresh(self) -> Workspace:
        """A workspace rebuilt from the ref, which must report exactly that ref."""
        workspace = select(self.capability, self.deps, self.ref)
        assert workspace is not None, f'get_workspace declined {ref_text(self.ref)} when rebuilding it'
        assert workspace.ref == self.ref, f'rebuilding {ref_text(self.ref)} gave {described(workspace)}'
        self.shapes.append(shape(workspace))
        return workspace

    async def each(self, operation: Callable[[Workspace], Awaitable[Any]]) -> Any:
        """Run one operation on a freshly rebuilt workspace."""
        return await operation(self.fresh())


async def rebuilt(capability: AbstractCapability[Any], deps: object) -> tuple[Workspace, Rebuilt]:
    """The capability's own workspace after its first operation, and a rebuilder for its ref."""
    origin = own_environment(capability, deps)
    return origin, Rebuilt(capability, deps, await first_use(origin))


async def dispatched(capability: AbstractCapability[Any], deps: object) -> tuple[RunContext[Any], dict[str, Any]]:
    """A tool's run context in a real agent run after the workspace's first use, and that context serialized.

    The serialized mapping is what `DurableRunContext.serialize_run_context` gives at dispatch, after the JSON
    round trip of an engine that sends it to another worker; it carries the run's ref as `workspace_ref`.
    """
    taken: list[tuple[RunContext[Any], dict[str, Any]]] = []
    agent: Agent[Any, str] = Agent(FunctionModel(script_one_tool_call), capabilities=[capability])

    @agent.tool
    async def act(ctx: RunContext[Any]) -> str:
        await first_use(ctx.workspace)
        wire = pydantic_core.to_jsonable_python(DurableRunContext.serialize_run_context(ctx))
        taken.append((ctx, wire))
        return 'ok'

    await agent.run('use the workspace', deps=deps)
    assert taken, 'the agent run finished without calling its tool'
    return taken[0]


def _supplied(
    capability: AbstractCapability[Any], ctx: RunContext[Any], ref: WorkspaceRef | None, side: str
) -> tuple[object, ...]:
    """The shape of what `get_workspace(ctx, ref=ref)` supplies on `side`; a raised error fails the rule, saying so."""
    try:
        selected = capability.get_workspace(ctx, ref=ref)
    except UserError as error:
        raise AssertionError(
            f'{side}, get_workspace(ref={ref!r}) raised {error_text(error)}: it reads a run-context field that does '
            'not cross to a durable worker (only deps and the serialized fields do)'
        ) from error
    except Exception as error:
        raise AssertionError(f'{side}, get_workspace(ref={ref!r}) raised {error_text(error)}') from error
    if isinstance(selected, WorkspaceBackend) and not isinstance(selected, Workspace):
        selected = Workspace(selected)
    assert selected is not None, f'{side}, get_workspace(ref={ref!r}) returned None'
    assert isinstance(selected, Workspace), f'{side}, get_workspace(ref={ref!r}) returned {selected!r}'
    return shape(selected)


WORKER = DurabilityEngineSpec(engine_name='a durable engine', durable_unit_noun='unit', durable_container_noun='run')
"""How the errors of a rebuilt run context name the engine: none in particular."""


def _on_worker(ctx: RunContext[Any], wire: Mapping[str, Any], deps: object) -> RunContext[Any]:
    """The run context a worker restores from `wire`, the worker's agent attached, before it rebuilds the workspace.

    `get_workspace` runs there before the restored context has a workspace, so the rebuilt one gets none.
    """
    carried = {name: value for name, value in wire.items() if name != 'workspace_ref'}
    return DurableRunContext.restore(carried, deps=deps, agent=ctx.agent, engine_spec=WORKER)


class RebuildRules:
    """Rules in the rebuild-per-call mode durable execution puts a capability in."""

    @rule(area='rebuild', must='B11')
    async def test_rebuilt_workspaces_reach_the_same_files(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Operations each made through a workspace rebuilt from the ref share one environment's files."""
        origin, again = await rebuilt(capability, deps)
        root = await origin.working_dir()
        assert await again.each(lambda ws: ws.working_dir()) == root, 'a rebuilt workspace has another working dir'
        if origin.read_only:
            listed = sorted(entry.name for entry in await origin.list_dir(root))
            relisted = sorted(entry.name for entry in await again.each(lambda ws: ws.list_dir(root)))
            assert relisted == listed, f'a rebuilt workspace lists {relisted[:5]}, the original {listed[:5]}'
            return
        name = f'{MARK_PREFIX}rebuild-{uuid.uuid4().hex[:12]}'
        token = uuid.uuid4().hex
        try:
            await again.each(lambda ws: ws.write_text(name, token))
            assert await again.each(lambda ws: ws.exists(name)), (
                f'{name}, written through one rebuild, is missing in the next'
            )
            read = await again.each(lambda ws: ws.read_text(name))
            assert read == token, f'{name} reads {read[:80]!r} through a rebuild, {token!r} was written'
            assert await origin.read_text(name) == token, f'{name} written through a rebuild is not in the original'
            await again.each(lambda ws: ws.remove(name))
            assert not await again.each(lambda ws: ws.exists(name)), (
                f'{name}, removed through a rebuild, is still there'
            )
        finally:
            if await origin.exists(name):
                await origin.remove(name)

    @rule(area='rebuild', must='C08')
    async def test_rebuilt_workspaces_keep_the_ref_and_the_policy(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Every rebuild from the ref gives the same ref, wrapper layers and `durable_policy()` values."""
        origin, again = await rebuilt(capability, deps)
        for _ in range(3):
            await again.each(lambda ws: ws.working_dir())
        expected = shape(origin)
        different = [found for found in again.shapes if found != expected]
        assert not different, (
            f'rebuilt from its ref the workspace is {different[0]}, where get_workspace(ref=None) gave {expected} '
            '(layers, ref, durable policies)'
        )

    @rule(area='rebuild', must='C16')
    async def test_get_workspace_answers_the_same_on_a_durable_worker(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """From the serialized run context a worker gets, `get_workspace` supplies what it supplies in the workflow."""
        ctx, wire = await dispatched(capability, deps)
        ref = ctx.workspace.ref
        assert isinstance(ref, WorkspaceRef), f'after its first operation the run reports ref {ref!r}'
        on_worker = _on_worker(ctx, wire, deps)
        for asked in (ref, None):
            workflow = _supplied(capability, ctx, asked, 'in the workflow')
            worker = _supplied(capability, on_worker, asked, 'on a durable worker')
            assert worker == workflow, (
                f'get_workspace(ref={asked!r}) supplies {worker} on a durable worker, {workflow} in the workflow '
                '(layers, ref, durable policies)'
            )
