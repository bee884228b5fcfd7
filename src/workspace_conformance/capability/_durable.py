"""What the durable-engine rules share: the durable agent, its attempts and its verdicts, and Prefect's harness."""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.workspaces import WorkspaceRef

from ..authoring import ref_text, select
from ._support import Mark, leave_mark

__all__ = (
    'Attempts',
    'Crash',
    'PrefectHarnessClosed',
    'cleanup',
    'console_logging_off',
    'durable_agent',
    'idle_ref',
    'prefect_harness',
    'verdict',
)

HARNESS_CLOSE = 30.0
"""Seconds a stale or the last Prefect harness has to drain its log workers and stop its server."""
HEALTH_TIMEOUT = 10.0
"""Seconds the kept Prefect server has to answer its health check before a check starts a new one."""
HTTP_OK = 200
STARTS = 3
"""Times the harness tries to start Prefect's server when what answered on its port was not that server.

Prefect's harness picks the port by binding to port 0 and closing it, and its server binds it seconds later, so
another process (a Temporal dev server, say) can take the port in between and answer the first health request.
"""


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


def verdict(attempts: Attempts, first: WorkspaceRef | None, final: object, engine: str, how: str) -> None:
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


def idle_ref(ref: object, engine: str) -> None:
    """Fail unless a durable run that used no tool still created or attached its environment at start."""
    assert isinstance(ref, WorkspaceRef), (
        f'a {engine} run whose model used no tool ended with result.workspace.ref {ref!r}: inside a durable run the '
        'environment is created or attached when the run starts'
    )


async def cleanup(capability: AbstractCapability[Any], deps: object, attempts: Attempts) -> None:
    """Remove the mark from the environment it was left in (best effort: the rule has its verdict)."""
    ref = next((ref for ref in attempts.refs if ref is not None), None)
    if attempts.mark is None or ref is None:
        return
    with contextlib.suppress(Exception):
        workspace = select(capability, deps, ref)
        if workspace is not None:
            await attempts.mark.remove(workspace)


@contextlib.contextmanager
def console_logging_off(*prefixes: str) -> Iterator[None]:
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


class _PrefectHarness:
    """Prefect's own test harness (`prefect_test_harness`), entered in a thread of its own until closed.

    Its server takes seconds of CPU to start (import, migrations, services), so the harness is kept for the next
    check of the process; each check runs its own flows, whose tasks' cache keys hold their flow run's id.
    """

    def __init__(self, startup: int) -> None:
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.settings: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._hold, args=(startup,), name='wc-prefect-harness', daemon=True)
        self.thread.start()

    def _hold(self, startup: int) -> None:
        import httpx
        from prefect.context import get_settings_context
        from prefect.testing.utilities import prefect_test_harness

        stack = contextlib.ExitStack()
        try:
            for start in range(1, STARTS + 1):
                try:
                    with console_logging_off('prefect', 'uvicorn'):
                        stack.enter_context(prefect_test_harness(server_startup_timeout=startup))
                    break
                except httpx.HTTPError:  # a stranger answered on the port: stop our server, try a fresh port
                    _stop_unstarted_server()
                    if start == STARTS:
                        raise
            self.settings = get_settings_context()
            atexit.register(self.close)  # before the server's own `stop`, which the harness's start registered
        except BaseException as error:  # the waiting check raises it
            self.error = error
            return
        finally:
            self.ready.set()
        self.stop.wait()
        with console_logging_off('prefect', 'uvicorn'), contextlib.suppress(Exception):
            stack.close()

    def healthy(self) -> bool:
        """Whether the harness started and its server still answers (a run directory's cleanup may have ended it)."""
        if self.error is not None:
            return False
        if not self.ready.is_set():  # still starting: the check waits for it
            return True
        url = str(self.settings.settings.api.url).rstrip('/')
        try:  # the standard library's client: `certify` installs no HTTP client of its own
            with urllib.request.urlopen(f'{url}/health', timeout=HEALTH_TIMEOUT) as answer:
                return bool(answer.status == HTTP_OK)
        except (urllib.error.URLError, OSError):
            return False

    def close(self) -> None:
        """Leave the harness (drain its log workers, stop its server), waiting `HARNESS_CLOSE` seconds at most."""
        self.stop.set()
        self.thread.join(HARNESS_CLOSE)


def _stop_unstarted_server() -> None:
    """Stop the server a failed harness start left registered as the process's default, and forget it."""
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer._instances.get(None)  # the harness registers its server there before starting it
    if server is not None and not server.running:
        SubprocessASGIServer._instances.pop(None, None)
        server.stop()


_prefect_lock = threading.Lock()
_prefect: list[_PrefectHarness] = []
"""The process's kept Prefect harness, if any."""


@contextlib.contextmanager
def prefect_harness(startup: int) -> Iterator[None]:
    """Prefect's test harness for one check, its server started by the process's first check (within `startup` s)."""
    with _prefect_lock:
        if _prefect and not _prefect[0].healthy():
            _prefect.pop().close()
        if not _prefect:
            _prefect.append(_PrefectHarness(startup))
        harness = _prefect[0]
    harness.ready.wait()
    if harness.error is not None:
        with _prefect_lock:
            if harness in _prefect:
                _prefect.remove(harness)
        raise harness.error
    with harness.settings.model_copy():  # this thread's context gets the harness's settings (its server's URL)
        yield


class PrefectHarnessClosed:
    """A suite's mixin: the kept Prefect harness is closed at the session's end, before `certify` ends its processes."""

    @pytest.fixture(scope='session', autouse=True)
    @staticmethod
    def _prefect_harness_closed() -> Iterator[None]:
        yield
        with _prefect_lock:
            while _prefect:
                _prefect.pop().close()
