"""One recorded tool call: a real agent run, scripted by a `FunctionModel`, calling one tool under the host watch."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.workspaces import Workspace

from ..authoring import HostEvent, calling, machinery_hidden, safe_str, watching_host
from ._fit import REFUSED_OUTCOMES, noted_uses, refusal
from ._host_audit import tree_diff
from ._workspaces import ToolWorkspace

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('CallRecord', 'call_tool', 'scripted_model')


@dataclass(frozen=True)
class CallRecord:
    """One tool call in one workspace: its arguments, its outcome, what the model saw, what it changed on the host."""

    workspace: str
    tool: str
    arguments: Mapping[str, Any]
    outcome: str
    """`success`, `retried`, `failed`, `denied`, `interrupted`, `raised` (an exception ended the run) or `unknown`."""
    content: str
    changed: tuple[str, ...]
    """Paths of the workspace's tree that the call changed (added, removed or altered)."""
    host: tuple[HostEvent, ...]
    executed: bool = True
    """Whether the tool's code ran (the run did not fail before it)."""
    attached: bool | None = None
    """Whether the tool's `ctx.workspace` reached an environment (None: the tool did not run)."""
    refused: str | None = None
    """What the workspace refused that the call met (`commands`, `read-only`: `_fit.refusal`), when it did not work."""
    used: tuple[str, ...] = ()
    """The backend methods the call made, where the workspace's backend is a default local one (`run`, ...)."""

    @property
    def fits(self) -> bool:
        """Whether the call met a workspace it fits: it did not stop at something the workspace refuses."""
        return self.refused is None

    def __str__(self) -> str:
        return f'{self.tool}({_short_args(self.arguments)}) on {self.workspace}: {self.outcome}'


def _short_args(arguments: Mapping[str, Any]) -> str:
    return ', '.join(f'{key}={repr(value)[:60]}' for key, value in arguments.items())


class _Observer(AbstractCapability[Any]):
    """Brackets each tool call: attributes its host I/O to the tool, and hashes the workspace's tree around it."""

    def __init__(
        self, snapshot: Callable[[], Any], log: list[tuple[str, tuple[str, ...], BaseException | None, list[str]]]
    ):
        self.snapshot = snapshot
        self.log = log
        self.attached: bool | None = None
        """Whether the last call's `ctx.workspace` reached an environment (None: no call ran)."""

    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, handler: Any
    ) -> Any:
        self.attached = ctx.workspace.attached
        before = await self.snapshot()
        error: BaseException | None = None
        with noted_uses() as uses:
            try:
                with calling(call.tool_name):
                    return await handler(args)
            except BaseException as raised:
                error = raised
                raise
            finally:
                self.log.append((call.tool_name, tree_diff(before, await self.snapshot()), error, uses))


def scripted_model(name: str, arguments: Mapping[str, Any]) -> FunctionModel:
    """A `FunctionModel` that calls `name(**arguments)` once, then answers text (streamed too, for Coder)."""
    pending = [(name, dict(arguments))]

    def step(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not pending:
            return _respond('done')
        tool, args = pending.pop()
        return ModelResponse(parts=[ToolCallPart(tool, args)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if pending:
            tool, args = pending.pop()
            yield {0: DeltaToolCall(name=tool, json_args=json.dumps(args))}
        else:
            yield 'done'

    return FunctionModel(step, stream_function=stream)


def _returned(messages: Sequence[ModelMessage], name: str) -> tuple[str | None, str]:
    """The outcome and content of the first return to a call of `name` in the run's messages."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == name:
                return getattr(part, 'outcome', 'success'), part.model_response_str()
            if isinstance(part, RetryPromptPart) and part.tool_name == name:
                return 'retried', part.model_response()
    return None, ''


def _respond(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


async def call_tool(
    capability: AbstractCapability[Any],
    deps: object,
    workspace: Workspace | None,
    where: ToolWorkspace | None,
    tool: ToolDefinition,
    arguments: Mapping[str, Any],
    snapshot: Callable[[], Any],
    *,
    also: Sequence[AbstractCapability[Any]] = (),
    history: Sequence[ModelMessage] | None = None,
) -> CallRecord:
    """One agent run calling `tool(**arguments)`, watched; `workspace=None` runs with no workspace attached.

    `also` are more capabilities of the agent (one supplying workspaces, say), `history` the run's message history.
    """
    log: list[tuple[str, tuple[str, ...], BaseException | None, list[str]]] = []
    observer = _Observer(snapshot, log)
    agent: Agent[Any, str] = Agent(
        scripted_model(tool.name, arguments), capabilities=[capability, *also, observer], retries=3
    )
    allowed = [str(await workspace.working_dir())] if where is not None and where.local and workspace else []
    kwargs: dict[str, Any] = {'deps': deps, 'message_history': history}
    if workspace is not None:
        kwargs['workspace'] = workspace
    outcome: str | None
    errors: list[BaseException] = []
    with watching_host(allowed) as watch:
        try:
            result = await agent.run('call the tool', **kwargs)
        except Exception as error:
            outcome, content = 'raised', safe_str(error)
            errors.append(error)
        else:
            outcome, content = _returned(result.new_messages(), tool.name)
    changed = tuple(change for _, diff, _, _ in log for change in diff)
    errors += [error for _, _, error, _ in log if error is not None]
    refused = None
    if workspace is not None and where is not None and outcome in REFUSED_OUTCOMES:
        refused = refusal(errors, commands=where.commands, read_only=workspace.read_only)
    return CallRecord(
        where.name if where is not None else 'no workspace',
        tool.name,
        dict(arguments),
        outcome or 'unknown',
        content,
        changed,
        tuple(watch.events),
        executed=bool(log),
        attached=observer.attached,
        refused=refused,
        used=tuple(use for _, _, _, uses in log for use in uses),
    )
