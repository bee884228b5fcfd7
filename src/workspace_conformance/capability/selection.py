"""Rules on what `get_workspace` supplies: no I/O, no state, exactly the asked ref, no silent replacement."""

from __future__ import annotations

from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceUnavailableError

from ..authoring import (
    described,
    expect_error,
    first_use,
    own_environment,
    ref_text,
    rule,
    run_context,
    select,
    supplied,
)
from ._shared import shape
from ._support import DestroyRef, run_in_agent, watching_io

__all__ = ('SelectionRules',)


class SelectionRules:
    """Rules on `get_workspace` itself, called as a run calls it."""

    @rule(area='selection', must='C01')
    async def test_get_workspace_builds_without_io(self, capability: AbstractCapability[Any], deps: object) -> None:
        """`get_workspace(ref=None)` returns a backend without I/O, creating nothing until the first operation."""
        with watching_io() as watch:
            selected = capability.get_workspace(run_context(deps), ref=None)
        assert not watch.seen, (
            f'get_workspace(ref=None) changed the host or reached the network before any operation: '
            f'{"; ".join(watch.seen[:5])}'
        )
        assert selected is not None, 'get_workspace(ref=None) returned None: the capability supplies no workspace'
        assert isinstance(selected, WorkspaceBackend), (
            f'get_workspace(ref=None) returned {selected!r}, neither a backend nor a Workspace'
        )

    @rule(area='selection', must='C06')
    async def test_get_workspace_is_repeatable_and_keeps_no_state(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Called again, `get_workspace` supplies an equivalent workspace; using one does not change the next."""
        first = own_environment(capability, deps)
        second = own_environment(capability, deps)
        assert shape(first) == shape(second), (
            f'two calls of get_workspace(ref=None) supplied {described(first)} and then {described(second)}'
        )
        before = second.ref
        await first_use(first)
        third = own_environment(capability, deps)
        assert third.ref == before and shape(third) == shape(second), (
            f'after one supplied workspace was used, get_workspace(ref=None) supplied {described(third)} instead of '
            f'{described(second)}: it keeps state between calls'
        )

    @rule(area='selection', must='C02')
    async def test_a_recognized_ref_is_supplied_with_exactly_that_ref(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """For a ref it created, `get_workspace` returns at once, without I/O, a backend reporting exactly that ref."""
        ref = await first_use(own_environment(capability, deps))
        with watching_io() as watch:
            again = capability.get_workspace(run_context(deps), ref=ref)
        assert again is not None, f'get_workspace declined {ref_text(ref)}, the ref of an environment it supplied'
        assert again.ref == ref, f'get_workspace({ref_text(ref)}) returned {described(again)}, another ref'
        assert not watch.seen, f'get_workspace({ref_text(ref)}) did I/O: {"; ".join(watch.seen[:5])}'

    @rule(area='selection', level='extended', requires=['destroy_ref'], must='A10')
    async def test_a_gone_environment_raises_unavailable_and_never_starts_over(
        self, capability: AbstractCapability[Any], deps: object, destroy_environment: DestroyRef | None
    ) -> None:
        """A run given a destroyed environment's ref gets `WorkspaceUnavailableError`; nothing recreates it."""
        ref = await first_use(own_environment(capability, deps))
        await supplied(destroy_environment, 'destroy_ref')(ref)
        with expect_error(WorkspaceUnavailableError, f'a run given {ref_text(ref)} after destroying it'):
            await run_in_agent(capability, lambda ws: ws.working_dir(), deps=deps, workspace=ref)
        again = select(capability, deps, ref)
        if again is not None:  # declining a destroyed ref also leaves it destroyed
            with expect_error(WorkspaceUnavailableError, f'a second use of {ref_text(ref)} after the failed run'):
                await again.working_dir()
