"""The Temporal check of `durable.py`, apart because its workflow must be a module-level class importing temporalio.

Imported only by the Temporal rule, after its requirement found temporalio installed.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin, TemporalDurability
from pydantic_ai.workspaces import WorkspaceRef
from temporalio import workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ._durable import Attempts, cleanup, console_logging_off, durable_agent, idle_ref, verdict
from ._support import error_text

__all__ = ('temporal_check',)

RUNS: dict[str, tuple[Agent[Any, str], object]] = {}
"""The agent and deps of each run in flight, by agent name, for the one workflow class to find."""
HOW = 'Temporal retried the check activity (each workflow task replaying the run from its history)'


@workflow.defn(name='workspace_conformance_durable_run')
class DurableRun:
    """Runs the registered agent named by its argument and returns `result.workspace.ref`."""

    @workflow.run
    async def run(self, name: str) -> WorkspaceRef | None:
        agent, deps = RUNS[name]
        return (await agent.run('use the workspace', deps=deps)).workspace.ref


def _durability(deps: object) -> TemporalDurability[Any]:
    """Activities retried once, quickly: the first `check` dies, its retry must find the mark."""
    retried = RetryPolicy(initial_interval=timedelta(milliseconds=50), maximum_attempts=2)
    return TemporalDurability(
        deps_type=None if deps is None else type(deps),
        activity_config={'start_to_close_timeout': timedelta(seconds=60), 'retry_policy': retried},
    )


async def _run(client: Client, queue: str, agent: Agent[Any, str], deps: object, what: str) -> WorkspaceRef | None:
    """Run `agent` in the workflow on `queue` and return its result's ref; a failed workflow fails the rule."""
    name = str(agent.name)
    RUNS[name] = (agent, deps)
    try:
        ref: WorkspaceRef | None = await client.execute_workflow(
            DurableRun.run, name, id=f'{queue}-{name}', task_queue=queue, execution_timeout=timedelta(seconds=120)
        )
        return ref
    except WorkflowFailureError as error:
        cause: BaseException = error
        while isinstance(getattr(cause, 'cause', None), BaseException):  # an activity's error, then what it raised
            cause = cause.cause  # type: ignore[attr-defined]
        raise AssertionError(f'{what}, the workflow failed: {error_text(cause)}') from error
    finally:
        RUNS.pop(name, None)


async def temporal_check(capability: AbstractCapability[Any], deps: object, cli: str) -> None:
    """A run in a Temporal workflow dies in its check activity; the retried activity rebuilds the workspace by ref.

    The worker keeps no workflow cache, so each workflow task replays the run from its history and rebuilds the
    workspace from the journaled ref workflow-side too. The dev server (`cli`) listens on loopback only and is
    stopped before the check returns.
    """
    attempts = Attempts()
    agent = durable_agent(capability, _durability(deps), attempts)
    idle = durable_agent(capability, _durability(deps), Attempts(), tools=False)
    queue = f'wc-{uuid.uuid4().hex}'
    with console_logging_off('temporalio'):
        server = await WorkflowEnvironment.start_local(
            ip='127.0.0.1', ui=False, dev_server_existing_path=cli, plugins=[PydanticAIPlugin()]
        )
        try:
            async with Worker(
                server.client,
                task_queue=queue,
                workflows=[DurableRun],
                plugins=[AgentPlugin(agent), AgentPlugin(idle)],
                workflow_runner=UnsandboxedWorkflowRunner(),
                max_cached_workflows=0,
            ):
                idle_ref(await _run(server.client, queue, idle, deps, 'in a run whose model used no tool'), 'Temporal')
                final = await _run(server.client, queue, agent, deps, f'after {HOW}')
                verdict(attempts, attempts.refs[0] if attempts.refs else None, final, 'Temporal', HOW)
        finally:
            await cleanup(capability, deps, attempts)
            await server.shutdown()
