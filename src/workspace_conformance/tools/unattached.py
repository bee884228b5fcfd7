"""Rules on runs with no workspace attached: the tools say what to attach and never fall back to the host's cwd."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ..authoring import rule, safe_str, skip
from ._shared import listed
from ._sweeps import ToolSweeps, call_unattached

ANSWER = 'no tool needed'

__all__ = ('UnattachedRules',)


class UnattachedRules:
    """Rules on tools in runs without a workspace."""

    @rule(area='unattached', alone=True, must='T03')
    async def test_fails_at_start_or_reports(self, sweeps: ToolSweeps) -> None:
        """Without a workspace a run fails at start naming what to attach, or tools report it; never the host cwd."""
        swept = await sweeps.sweep_all()
        calls = {call.tool: call.arguments for recorded in swept for call in recorded.calls}
        tools = {tool.name: tool for recorded in swept for tool in recorded.tools}
        if not calls:
            skip('not-applicable', 'the capability offers no tools to call')
        found: list[str] = []
        for name, arguments in calls.items():
            call, changed = await call_unattached(
                sweeps.capability, sweeps.deps, tools[name], arguments, sweeps.runs.base
            )
            if call.attached:
                skip('not-applicable', 'the capability supplies a workspace of its own: its runs always have one')
            found += [f'{call}: {event}' for event in call.host]
            found += [f'{call}: {path} changed' for path in changed]
            if call.outcome == 'success':
                found.append(f'{call}: the tool worked with no workspace attached ({call.content[:120]})')
            elif not call.executed and 'workspace' not in call.content.lower():
                found.append(f'{call}: the run failed without naming a workspace to attach: {call.content[:200]}')
        assert not found, f'tools with no workspace attached did not fail cleanly:{listed(found)}'

    @rule(area='unattached', level='extended', alone=True, since='0.3.0')
    async def test_fails_at_the_start_without_a_workspace(self, sweeps: ToolSweeps) -> None:
        """Without a workspace a run of the capability fails at its start, naming what to attach, before the model.

        pydantic-ai's docs suggest checking `ctx.workspace.attached` in `before_run`, so the run does not go ahead
        and fail on the first tool call instead.
        """
        swept = await sweeps.sweep_all()
        if not any(recorded.tools for recorded in swept):
            skip('not-applicable', 'the capability offers no tools, so it needs no workspace')
        asked: list[int] = []

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            asked.append(len(messages))
            return ModelResponse(parts=[TextPart(ANSWER)])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            asked.append(len(messages))
            yield ANSWER

        agent: Agent[Any, str] = Agent(FunctionModel(answer, stream_function=stream), capabilities=[sweeps.capability])
        try:
            result = await agent.run('start without a workspace', deps=sweeps.deps)
        except Exception as error:
            failure: BaseException | None = error
        else:
            if result.workspace.attached:
                skip('not-applicable', 'the capability supplies a workspace of its own: its runs always have one')
            failure = None
        assert failure is not None and not asked, (
            'with no workspace attached the run went ahead and asked the model, so it fails on the first tool call '
            'instead: check ctx.workspace.attached in before_run and raise, naming what to attach'
            if failure is None
            else f'the run failed only after the model was asked: {safe_str(failure)}'
        )
        assert 'workspace' in str(failure).lower(), (
            f'the run failed at its start without naming a workspace to attach: {safe_str(failure)}'
        )
