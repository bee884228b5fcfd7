"""Rules of durable rebuild: each operation through a workspace freshly rebuilt from its ref by `get_workspace`.

Under durable execution every workspace call rebuilds the workspace from the run's ref through the capabilities, so
nothing an operation did may live only in the Python object that made it.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import Workspace, WorkspaceRef

from ..authoring import rule
from ._support import MARK_PREFIX, described, first_use, own_environment, ref_text, select
from .selection import shape

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


class RebuildRules:
    """Rules in the rebuild-per-call mode durable execution puts a capability in."""

    @rule(area='rebuild')
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

    @rule(area='rebuild')
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
