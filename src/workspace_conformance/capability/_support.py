"""What capability rules stand on: the suite's fixtures, I/O watching, marks, and agent runs over a tool.

Asking for the workspace a capability supplies (`own_environment`, `select`, ...) is public: `authoring` has it.
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.workspaces import Workspace, WorkspaceRef

from ..authoring import SuiteFixtures, described, machinery_hidden, opens_for_writing, ref_text, safe_str
from ._secrets import runners_secrets

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'CapabilityFixtures',
    'IoWatch',
    'Policy',
    'run_in_agent',
    'watching_io',
)

Policy = Callable[[Workspace], Workspace]
"""Wraps a capability's workspace in the user's own policy wrapper (a `WrapperWorkspace` subclass)."""
DestroyRef = Callable[[WorkspaceRef], Awaitable[None]]
Result = TypeVar('Result')

_MUTATING_EVENTS = frozenset(
    {
        'os.mkdir',
        'os.makedirs',
        'os.remove',
        'os.rmdir',
        'os.rename',
        'os.replace',
        'os.symlink',
        'os.link',
        'os.chmod',
        'os.chown',
        'os.truncate',
        'os.system',
        'os.exec',
        'os.posix_spawn',
        'os.spawn',
        'os.fork',
        'os.forkpty',
        'shutil.rmtree',
        'shutil.copyfile',
        'shutil.move',
        'subprocess.Popen',
        'socket.connect',
        'socket.getaddrinfo',
        'tempfile.mkdtemp',
        'tempfile.mkstemp',
    }
)
"""Audit events that change the host or reach the network: what `get_workspace` must not do."""


@dataclass
class IoWatch:
    """The mutating audit events the watched block raised, each as `event(args)`, in order."""

    seen: list[str] = field(default_factory=list)
    active: bool = False


_WATCH: ContextVar[IoWatch | None] = ContextVar('workspace_conformance_io_watch', default=None)
"""The watch of the block running: tasks it starts and worker threads it hands work to (`anyio.to_thread`,
`asyncio.to_thread`) carry it, so their I/O is the block's too, and a rule running beside it is not."""
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    watch = _WATCH.get()
    if watch is None or not watch.active:
        return
    if (
        event in _MUTATING_EVENTS
        or (event == 'open' and opens_for_writing(args))
        or _opens_a_database_file(event, args)
    ):
        watch.seen.append(f'{event}{_short(args)}')


def _opens_a_database_file(event: str, args: tuple[Any, ...]) -> bool:
    """`sqlite3.connect` of a file (which it creates), not of an in-memory database."""
    if event != 'sqlite3.connect' or not args:
        return False
    database = args[0]
    return not (isinstance(database, str | bytes) and database in (':memory:', b':memory:', '', b''))


def _short(args: tuple[Any, ...]) -> str:
    return '(' + ', '.join(repr(arg)[:200] for arg in args[:2]) + ')'


@contextlib.contextmanager
def watching_io() -> Iterator[IoWatch]:
    """Record the host changes and network calls the block makes, in its tasks and the worker threads it uses."""
    if not _HOOKED:
        sys.addaudithook(_audit)  # hooks cannot be removed; an idle one costs one context lookup per event
        _HOOKED.append(True)
    watch = IoWatch(active=True)
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        watch.active = False
        _WATCH.reset(token)


def script_one_tool_call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A `FunctionModel` function that calls the tool `act` once, then answers."""
    if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
        return ModelResponse(parts=[TextPart('done')])
    return ModelResponse(parts=[ToolCallPart('act', {})])


async def run_in_agent(
    capability: AbstractCapability[Any] | None,
    action: Callable[[Workspace], Awaitable[Result]],
    *,
    deps: object = None,
    message_history: Sequence[ModelMessage] | None = None,
    workspace: object = None,
    agent_hook: Callable[[Agent[Any, str]], contextlib.AbstractContextManager[object]] | None = None,
    also: Sequence[AbstractCapability[Any]] = (),
) -> tuple[Result, Any]:
    """Run an agent (no network: a `FunctionModel`) whose one tool call does `action(ctx.workspace)`.

    `also` are more capabilities of the agent, after `capability`. Returns what `action` returned and the run's
    result; an exception of the tool ends the run and is raised.
    """
    capabilities = [*([] if capability is None else [capability]), *also]
    agent: Agent[Any, str] = Agent(FunctionModel(script_one_tool_call), capabilities=capabilities)
    returned: list[Result] = []

    @agent.tool
    async def act(ctx: RunContext[Any]) -> str:
        returned.append(await action(ctx.workspace))
        return 'ok'

    kwargs: dict[str, Any] = {'deps': deps, 'message_history': message_history}
    if workspace is not None:
        kwargs['workspace'] = workspace
    with agent_hook(agent) if agent_hook is not None else contextlib.nullcontext():
        result = await agent.run('use the workspace', **kwargs)
    if not returned:
        raise AssertionError('the agent run finished without calling its tool')
    return returned[0], result


def raised_or_none(call: Callable[[], object]) -> tuple[object, BaseException | None]:
    """`(returned, None)`, or `(None, error)` when `call` raised an Exception."""
    try:
        return call(), None
    except Exception as error:
        return None, error


class CapabilityFixtures(SuiteFixtures):
    """The fixtures of every `WorkspaceCapabilitySuite`; override them in a subclass."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        """`asyncio`: pydantic-ai's agent runs need it, so the capability suite runs on it only."""
        return 'asyncio'

    @pytest.fixture
    def capability(self) -> AbstractCapability[Any]:
        """The capability under test, an `AbstractCapability` whose `get_workspace` supplies workspaces."""
        raise NotImplementedError(
            'WorkspaceCapabilitySuite needs a `capability` fixture: define `@pytest.fixture def capability(self): '
            'return MyCapability(...)` in your subclass (for example `LocalWorkspace(tmp_path)`).'
        )

    @pytest.fixture
    def deps(self) -> object:
        """The deps of the runs and run contexts the rules build; `get_workspace` may read them."""
        return None

    @pytest.fixture
    def destroy_environment(self) -> DestroyRef | None:
        """`async (ref) -> None` destroying the environment a ref names, the way whoever holds the ref would."""
        return None

    @pytest.fixture
    def foreign_refs(self) -> Sequence[WorkspaceRef]:
        """Refs the capability must decline, in addition to the ones the rules generate."""
        return ()

    @pytest.fixture
    def secrets(self) -> Sequence[str]:
        """Credentials no ref, stored history or span may hold: by default the runner's secret-looking variables."""
        return runners_secrets()

    @pytest.fixture
    def policy(self) -> Policy | None:
        """Wraps a `Workspace` in your policy wrapper, to check that the policy holds when commands exist."""
        return None


def error_text(error: BaseException) -> str:
    """The error as `Type: message`, for failure messages."""
    return safe_str(error)


def is_fixed(workspace: Workspace) -> bool:
    """Whether the capability supplies one fixed environment: its ref is known before any operation."""
    return workspace.ref is not None


MARK_PREFIX = '.workspace-conformance-mark-'


@dataclass
class Mark:
    """A file a rule leaves in an environment to recognize it later, or the listing of a read-only one."""

    name: str
    token: str | None
    """The file's content; `None` in a read-only workspace, where the listing of the working dir stands in."""
    listing: tuple[str, ...] = ()

    async def seen_in(self, workspace: Workspace) -> bool:
        """Whether `workspace` is the environment the mark was left in."""
        if self.token is None:
            return await _listing(workspace) == self.listing
        return await workspace.exists(self.name) and await workspace.read_text(self.name) == self.token

    async def leave_again(self, workspace: Workspace) -> None:
        """Make the calls `leave_mark` made, with the same name and content (a replay must repeat them in order)."""
        if self.token is None:
            await _listing(workspace)
        else:
            await workspace.write_text(self.name, self.token)

    async def remove(self, workspace: Workspace) -> None:
        """Remove the mark (best effort: the rule has its verdict)."""
        if self.token is not None:
            with contextlib.suppress(Exception):
                await workspace.remove(self.name)


async def _listing(workspace: Workspace) -> tuple[str, ...]:
    return tuple(sorted(entry.name for entry in await workspace.list_dir(await workspace.working_dir())))


async def leave_mark(workspace: Workspace) -> Mark:
    """Leave a mark in the workspace's environment (a file; in a read-only one, its listing is the mark)."""
    name = f'{MARK_PREFIX}{uuid.uuid4().hex[:12]}'
    if workspace.read_only:
        return Mark(name, None, await _listing(workspace))
    token = uuid.uuid4().hex
    await workspace.write_text(name, token)
    return Mark(name, token)


def assert_started_fresh(
    fixed: Workspace, got: WorkspaceRef | None, seen: bool, mark: Mark, old: WorkspaceRef, run: str
) -> None:
    """Fail unless `run` went where a fresh run goes: a fixed capability's own environment, else not `old`'s.

    `got` is the ref the run ended with and `seen` whether its tool saw `mark`, left earlier in `old`'s environment.
    """
    if is_fixed(fixed):
        assert got == fixed.ref, f"{run} ran in {got!r}, not the capability's own {described(fixed)}"
        return
    assert got != old, f'{run} ran in {ref_text(old)}, the environment it must not continue'
    assert not (seen and mark.token), f'{run} sees {mark.name}, a file of {ref_text(old)}, which it must not continue'
