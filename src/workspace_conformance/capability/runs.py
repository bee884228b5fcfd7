"""Rules on agent runs over the capability: the ref a run records, continuing from it, `'new'`, untrusted history."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, sanitize_messages
from pydantic_ai.models.test import TestModel
from pydantic_ai.workspaces import Workspace, WorkspaceRef

from ..authoring import first_use, own_environment, ref_text, rule
from ._shared import marked_run, stored
from ._support import assert_started_fresh, run_in_agent

__all__ = ('RunRules',)


async def _use_twice(workspace: Workspace) -> WorkspaceRef:
    """The ref after the workspace's first operation; a second operation follows, which must not change it."""
    ref = await first_use(workspace)
    await workspace.exists(await workspace.working_dir())
    return ref


def _sanitized(messages: list[ModelMessage]) -> list[tuple[str, list[ModelMessage]]]:
    """The history after `sanitize_messages`, and after a UI adapter's sanitizing of client messages, by name."""
    from pydantic_ai.ui.vercel_ai import VercelAIAdapter
    from pydantic_ai.ui.vercel_ai.request_types import SubmitMessage

    adapter = VercelAIAdapter(
        agent=Agent(TestModel()), run_input=SubmitMessage(id='workspace-conformance', messages=[])
    )
    return [
        ('sanitize_messages', sanitize_messages(messages)),
        ('VercelAIAdapter.sanitize_messages', adapter.sanitize_messages(messages)),
    ]


class RunRules:
    """Rules on agent runs (a `FunctionModel`, no network) whose tool uses `ctx.workspace`."""

    @rule(area='runs', must='A01')
    async def test_the_recorded_ref_is_the_result_workspace_ref(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """The ref a run records on `ModelResponse.workspace_ref` is `result.workspace.ref`, the one tools used."""
        used, result = await run_in_agent(capability, _use_twice, deps=deps)
        final = result.workspace.ref
        assert final == used, f'the tool used {ref_text(used)} but result.workspace.ref is {final!r}'
        recorded = result.response.workspace_ref
        assert recorded == final, f'the last ModelResponse records {recorded!r}, result.workspace.ref is {final!r}'

    @rule(area='runs', must='B11')
    async def test_a_run_continues_in_the_ref_it_recorded(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A run given the recorded ref, by stored `message_history` or `workspace=ref`, reaches the same files."""
        mark, ref, result = await marked_run(capability, deps)
        try:
            for how, kwargs in (('message_history', {'message_history': stored(result)}), ('workspace=', {})):
                arguments: dict[str, Any] = kwargs or {'workspace': ref}
                seen, later = await run_in_agent(capability, mark.seen_in, deps=deps, **arguments)
                assert later.workspace.ref == ref, (
                    f'a run given {ref_text(ref)} by {how} ran in {later.workspace.ref!r}'
                )
                assert seen, (
                    f'a run given {ref_text(ref)} by {how} does not see the file {mark.name} the first run wrote'
                )
        finally:
            await mark.remove(result.workspace)

    @rule(area='runs', must='A07')
    async def test_a_run_without_workspace_capabilities_carries_the_ref_on(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """An agent with no workspace capability keeps a history's ref on its answer; the conversation goes on there."""
        mark, ref, result = await marked_run(capability, deps)
        try:
            middle = await Agent(TestModel(call_tools=[])).run('carry on', message_history=stored(result), deps=deps)
            carried = middle.response.workspace_ref
            assert carried == ref, (
                f'an agent with no workspace capability answered over a history in {ref_text(ref)} and recorded '
                f'{carried!r}: the conversation lost its environment'
            )
            seen, later = await run_in_agent(capability, mark.seen_in, deps=deps, message_history=stored(middle))
            assert later.workspace.ref == ref and seen, (
                f'a run over the history carried on by an agent without workspace capabilities ran in '
                f'{later.workspace.ref!r}, not {ref_text(ref)} where {mark.name} was left'
            )
        finally:
            await mark.remove(result.workspace)

    @rule(area='runs', must='A05')
    async def test_workspace_new_starts_fresh(self, capability: AbstractCapability[Any], deps: object) -> None:
        """`workspace='new'` gets what `get_workspace(ref=None)` supplies, not the environment the history names."""
        fixed = own_environment(capability, deps)
        mark, ref, result = await marked_run(capability, deps)
        try:
            seen, fresh = await run_in_agent(
                capability, mark.seen_in, deps=deps, message_history=stored(result), workspace='new'
            )
            assert_started_fresh(fixed, fresh.workspace.ref, seen, mark, ref, "workspace='new' over that history")
        finally:
            await mark.remove(result.workspace)

    @rule(area='runs', must='A07')
    async def test_an_unrecognized_history_ref_ends_the_run(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A history ref naming an environment the capability does not own ends the run with an error."""
        own = await first_use(own_environment(capability, deps))
        forged = WorkspaceRef(provider=own.provider, id=f'workspace-conformance-unknown-{uuid.uuid4().hex}')
        history: list[ModelMessage] = [ModelResponse(parts=[TextPart('earlier')], workspace_ref=forged)]
        try:
            _, result = await run_in_agent(capability, first_use, deps=deps, message_history=history)
        except AssertionError:
            raise
        except Exception:  # pydantic-ai's UserError, or the capability's own clear refusal: the run ended
            return
        raise AssertionError(
            f'a run whose history continues in {ref_text(forged)} ran in {result.workspace.ref!r} instead of failing'
        )

    @rule(area='runs', must='A11')
    async def test_sanitized_history_offers_no_ref(self, capability: AbstractCapability[Any], deps: object) -> None:
        """Sanitized by `sanitize_messages` or a UI adapter, a history names no workspace: a run over it starts anew."""
        fixed = own_environment(capability, deps)
        mark, ref, result = await marked_run(capability, deps)
        try:
            for how, cleaned in _sanitized(stored(result)):
                left = [m.workspace_ref for m in cleaned if isinstance(m, ModelResponse) and m.workspace_ref]
                assert not left, f'{how} left workspace refs in the history: {left[:2]}'
            seen, later = await run_in_agent(capability, mark.seen_in, deps=deps, message_history=cleaned)
            assert_started_fresh(fixed, later.workspace.ref, seen, mark, ref, f'a run over history sanitized by {how}')
        finally:
            await mark.remove(result.workspace)
