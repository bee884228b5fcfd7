"""What rules stand on: the suite's fixtures and switches, classified skips, scratch directories, helpers."""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal, NoReturn, TypeVar, overload

import anyio
import pytest
from pydantic_ai.workspaces import (
    CommandResult,
    SupportsCommands,
    SupportsFilesystem,
    Workspace,
    WorkspaceBackend,
    WorkspaceRef,
)

from .._frames import machinery_hidden
from .._mirror import Mirror, mirrored_class, protocol_members
from ..runtime.leftovers import scratch_in_use
from ..vocabulary import SKIP_KINDS, SkipKind
from ._baseline import Baseline
from ._failures import ConformanceConfigError, safe_str
from ._guard import CLEANUP_BOUND, SCALE_FIXTURE, current_run
from ._platform import paths
from ._requires import RuleSkipped, skip_reason
from ._rule import rule_of
from ._rules import catalog
from ._tracing import HangRemembered
from ._versions import pydantic_ai_at_least, pydantic_ai_version
from .waivers import FILED_PROPERTY, WAIVERS, unknown_ids

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'SKIP_KINDS',
    'ConformanceConfigError',
    'RebuiltPerCall',
    'RuleSkipped',
    'SuiteFixtures',
    'before_rules',
    'commands_of',
    'expect_error',
    'gather',
    'lacking',
    'make_link',
    'pydantic_ai_at_least',
    'pydantic_ai_version',
    'rebuilt_per_call',
    'run_environment_tool',
    'scratch',
    'skip',
    'skip_as_before',
    'skip_reason',
    'supplied',
    'workspace_of',
)

T = TypeVar('T')
A = TypeVar('A')
B = TypeVar('B')
C = TypeVar('C')

SCRATCH_PREFIX = '.workspace-conformance-'
"""Every scratch directory a rule makes starts with this, so leftovers are easy to find and remove."""


MakeSymlink = Callable[[WorkspaceBackend, str, str], Awaitable[None]]
FaultKind = Literal['transient', 'setup']
InjectFault = Callable[[WorkspaceBackend, FaultKind], 'type[BaseException] | None']
"""`(backend, kind) -> error type`: arm one fault in the backend's provider client (`SuiteFixtures.inject_fault`)."""
Supplied = TypeVar('Supplied')


def skip(kind: SkipKind, why: str) -> NoReturn:
    """Skip the running rule, with its kind and reason, as evidence rather than silence."""
    raise RuleSkipped(current_run().rule, kind, why)


def before_rules() -> Baseline | None:
    """What the backend's environment held before the rules acted (`engine/_baseline.py`); None when not probed."""
    return current_run().baseline


def lacking(checks: tuple[str, ...], observed: str, why: str) -> NoReturn:
    """The rule found none of `checks` (probe names) working: skip only when the baseline found none either.

    When the baseline saw one work, the backend lost it since: a failure quoting both observations. A rule with no
    baseline (its subject is not a backend the guard probed) skips on its own observation, as `why` says.
    """
    baseline = before_rules()
    if baseline is None:
        skip('environment', why)
    if baseline.answered and not baseline.has_any(checks):
        skip('environment', f'{why}; before the rules ran, {baseline.saw(checks)} either')
    raise AssertionError(f'before the rules ran, {baseline.saw(checks)}; in this rule {observed}')


def skip_as_before(kind: SkipKind, check: str, observed: str, why: str) -> NoReturn:
    """The rule saw `check` (a probe name) hold: skip only when the baseline saw it hold too, else fail with both."""
    baseline = before_rules()
    if baseline is None or baseline.has_any((check,)):
        skip(kind, why)
    before = f'the probe found no `{check}`' if baseline.answered else baseline.saw((check,))
    raise AssertionError(f'before the rules ran, {before}; in this rule {observed}')


def installed_trio() -> bool:
    """Whether Trio is importable, so the suite can run every rule on it too."""
    return importlib.util.find_spec('trio') is not None


def _undeclared(requirement: str, what: str) -> NoReturn:
    rule = current_run().rule
    raise ConformanceConfigError(
        f'rule {rule.id} uses {what} but does not declare it: add {requirement!r} to its @rule(requires=...)'
    )


def supplied(value: Supplied | None, requirement: str) -> Supplied:
    """An optional fixture the rule declares in `requires` (its guard skips the rule as fixture-missing without it)."""
    if value is None:
        _undeclared(requirement, 'an optional fixture')
    return value


def commands_of(backend: WorkspaceBackend) -> SupportsCommands:
    """The backend's commands; the rule must declare `requires=['commands']`, which its guard checks first."""
    if not isinstance(backend, SupportsCommands):
        _undeclared('commands', "the backend's commands")
    return backend


def workspace_of(backend: WorkspaceBackend) -> Workspace:
    """A `Workspace` over the backend; the rule must declare `requires=['filesystem']` or `['commands']`."""
    if not isinstance(backend, SupportsFilesystem | SupportsCommands):
        _undeclared('filesystem', "the backend's files")
    return Workspace(backend)


@asynccontextmanager
async def scratch(workspace: Workspace) -> AsyncIterator[str]:
    """A new directory under the working directory for one rule, removed afterwards even on failure."""
    run = current_run()
    root = paths.join(await workspace.working_dir(), f'{SCRATCH_PREFIX}{run.rule.id}-{uuid.uuid4().hex[:12]}')
    await workspace.make_dir(root)
    forget = scratch_in_use(root)  # should the process have to end at once, a local one still goes
    failed = True
    try:
        yield root
        failed = False
    finally:
        # Shielded and bounded: a cancelled or failed rule still cleans up, and a hung remove can't stall it.
        with anyio.move_on_after(run.seconds(30), shield=True) as cleanup:
            try:
                await workspace.remove(root)
            except HangRemembered:
                if not failed:
                    raise
            except Exception as error:
                if not failed:
                    raise AssertionError(f'removing the scratch directory {root} raised {safe_str(error)}') from error
        forget()
        if cleanup.cancelled_caught:
            run.log.remember_hangs(since=cleanup.deadline - 0.25, waited=max(run.seconds(15), run.log.grace))
        if cleanup.cancelled_caught and not failed:
            bound = run.seconds(CLEANUP_BOUND)
            raise AssertionError(f'removing the scratch directory {root} did not finish in {bound:g} s')


@overload
async def gather(first: Awaitable[A], second: Awaitable[B], /) -> tuple[A, B]: ...
@overload
async def gather(first: Awaitable[A], second: Awaitable[B], third: Awaitable[C], /) -> tuple[A, B, C]: ...
@overload
async def gather(*calls: Awaitable[T]) -> tuple[T, ...]: ...
async def gather(*calls: Awaitable[Any]) -> tuple[Any, ...]:
    """Await independent backend calls at once: their results in order, or, once all ended, the first failure in order.

    Ordered failures keep a rule's message the same however the calls interleave; a slow provider pays one round
    trip for the lot instead of one each.
    """
    results: list[Any] = [None] * len(calls)
    errors: list[Exception | None] = [None] * len(calls)

    async def one(index: int, call: Awaitable[Any]) -> None:
        try:
            results[index] = await call
        except Exception as error:
            errors[index] = error

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(one, index, call)
    for error in errors:
        if error is not None:
            raise error
    return tuple(results)


@contextmanager
def expect_error(expected: type[BaseException] | tuple[type[BaseException], ...], doing: str) -> Iterator[None]:
    """Require the block to raise `expected`; otherwise fail saying what `doing` did instead."""
    names = ' or '.join(kind.__name__ for kind in (expected if isinstance(expected, tuple) else (expected,)))
    try:
        yield
    except expected:
        return
    except Exception as error:
        raise AssertionError(f'{doing} raised {safe_str(error)}, not {names}') from error
    raise AssertionError(f'{doing} returned normally instead of raising {names}')


async def run_environment_tool(backend: WorkspaceBackend, argv: list[str], tool: str) -> CommandResult:
    """Run an environment tool the rule needs; exit 127 is an environment skip only if it was missing from the start."""
    result = await commands_of(backend).run(argv)
    if result.exit_code == 127:
        observed = f'`{argv[0]}` exited 127 (command not found)'
        lacking((tool,), observed, f'no `{tool}` in the environment ({argv[0]} exited 127)')
    return result


async def make_link(backend: WorkspaceBackend, make_symlink: MakeSymlink | None, target: str, link: str) -> None:
    """Create a symlink through the `make_symlink` fixture, else `ln -s` (the rule declares `requires=['ln']`)."""
    if make_symlink is not None:
        await make_symlink(backend, target, link)
        return
    result = await run_environment_tool(backend, ['ln', '-s', target, link], 'ln')
    if result.exit_code != 0:
        said = f'exit {result.exit_code}: {result.stderr.strip()[:200]}'
        lacking(('ln -s',), f'`ln -s` failed ({said})', f'`ln -s` cannot create symlinks here ({said})')


class RebuiltPerCall(Mirror):
    """A backend whose every operation goes to a backend freshly built from its ref, as durable execution does.

    Until the environment has a ref (a lazy backend's first operation) calls go to the backend itself, which creates
    it; from then on each call goes to `attach(ref)`, so state kept in the Python object is lost, as in a durable run.
    """

    def __init__(self, wrapped: object, attach: Callable[[WorkspaceRef], WorkspaceBackend]) -> None:
        self._wrapped = wrapped
        self._attach = attach

    async def _intercept(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[[], Awaitable[Any]]
    ) -> Any:
        ref = self._wrapped.ref
        if ref is None:
            return await call()
        rebuilt = self._attach(ref)
        if rebuilt.ref != ref:
            raise AssertionError(f'attach_backend({ref!r}) built a backend with ref {rebuilt.ref!r} (rebuild per call)')
        return await getattr(rebuilt, name)(*args, **kwargs)

    def __repr__(self) -> str:
        return f'rebuilt_per_call({self._wrapped!r})'


def rebuilt_per_call(backend: Any, attach: Callable[[WorkspaceRef], WorkspaceBackend]) -> Any:
    """`backend` with each operation made on `attach(ref)`, a backend rebuilt from its ref (the same protocols)."""
    if isinstance(backend, RebuiltPerCall | Workspace) or backend is None:
        return backend
    return mirrored_class(RebuiltPerCall, protocol_members(backend))(backend, attach)


REBUILD_MISSING = (
    'provide the `attach_backend` fixture to check this in rebuild-per-call mode (each operation goes to '
    '`attach_backend(ref)`)'
)


def rebuild_for_rule(item: pytest.Item) -> None:
    """In rebuild-per-call mode, give a backend rule the backend rebuilt from its ref for every operation.

    Skips the rule as `fixture-missing` when the suite has no `attach_backend` to rebuild with.
    """
    meta = rule_of(getattr(item, 'function', None))
    funcargs: dict[str, Any] | None = getattr(item, 'funcargs', None)
    if meta is None or funcargs is None or 'backend' not in funcargs:
        return
    request: pytest.FixtureRequest = getattr(item, '_request')  # noqa: B009  # the item's own fixture request
    try:
        if not request.getfixturevalue('rebuild_per_call'):
            return
        attach = request.getfixturevalue('attach_backend')
    except pytest.FixtureLookupError:
        return  # not a suite of ours
    if attach is None:
        raise RuleSkipped(meta, 'fixture-missing', REBUILD_MISSING)
    funcargs['backend'] = rebuilt_per_call(funcargs['backend'], attach)


class SuiteFixtures:
    """The fixtures and switches every `WorkspaceBackendSuite` has; override them in a subclass."""

    __conformance_suite__ = True
    """Marks the classes whose rules the suite's collection hooks look after (overridden rules, skip locations)."""

    @pytest.fixture
    def backend(self) -> WorkspaceBackend:
        """The backend under test: override it in your subclass (sync or async, generator or not, any scope)."""
        raise NotImplementedError(
            'WorkspaceBackendSuite needs a `backend` fixture: define `@pytest.fixture def backend(self): return '
            'MyBackend(...)` in your subclass.'
        )

    @pytest.fixture
    def fresh_backend(self) -> Callable[[], WorkspaceBackend] | None:
        """A factory of backends built without a ref, whose first operation creates an environment."""
        return None

    @pytest.fixture
    def destructive_backend(
        self, fresh_backend: Callable[[], WorkspaceBackend] | None
    ) -> Callable[[], WorkspaceBackend] | None:
        """A factory of independent, sacrificial environments; defaults to `fresh_backend`."""
        return fresh_backend

    @pytest.fixture
    def attach_backend(self) -> Callable[[WorkspaceRef], WorkspaceBackend] | None:
        """A factory that builds a backend attached to an existing environment by its ref."""
        return None

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]] | None:
        """Destroys the environment behind a backend, the way whoever holds its ref would."""
        return None

    @pytest.fixture
    def stop_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]] | None:
        """Stops the environment behind a backend the way its init dying does (`docker kill`); its storage stays."""
        return None

    @pytest.fixture
    def start_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]] | None:
        """Starts the stopped environment behind a backend again (`docker start`), the way a provider resumes one."""
        return None

    @pytest.fixture
    def rebuild_per_call(self, request: pytest.FixtureRequest) -> bool:
        """True: every operation of a rule goes to `attach_backend(ref)`, as under durable execution.

        `--conformance-rebuild-per-call` turns it on; it finds backends that keep state in the Python object.
        """
        return bool(request.config.getoption('conformance_rebuild_per_call', default=False))

    @pytest.fixture
    def make_symlink(self) -> MakeSymlink | None:
        """`async (backend, target, link)` creating a symlink without commands; `None` uses `ln -s`."""
        return None

    @pytest.fixture
    def inject_fault(self) -> InjectFault | None:
        """`(backend, kind) -> error type`: arm one fault in the backend's provider client, the way an SDK fails.

        `'transient'`: the backend's next call to its provider raises the SDK's own transient error (a dropped
        connection, a 503), once; return that error's type. `'setup'`: the setup step right after the next
        environment creation (making the working directory, say) fails, once; return the type raised. Return None
        for a kind the backend cannot inject: the rule on it is then a gap.
        """
        return None

    @pytest.fixture
    def storage_holds_symlinks(self) -> bool | None:
        """Whether the backend's storage can hold symlinks; `None` infers it (commands, SupportsRealpath, make_symlink).

        A filesystem-only backend without SupportsRealpath is taken to hold none, so its symlink rules are not
        applicable; return True if it can, and they stay gaps until `make_symlink` creates links.
        """
        return None

    @pytest.fixture
    def can_detect_exit_with_inherited_output_pipes(self) -> bool:
        """False when the provider reports an exit only after every holder of the output pipes has exited."""
        return True

    @pytest.fixture
    def filesystem_honors_shell_permissions(self) -> bool:
        """False when the provider's file API bypasses the command user's permissions."""
        return True

    @pytest.fixture
    def has_real_posix_shell(self) -> bool:
        """False only for a test double with no POSIX processes or byte streams."""
        return True

    @pytest.fixture
    def enforces_parent_file_errors(self) -> bool:
        """False only for a test double without real path traversal."""
        return True

    @pytest.fixture
    def declared_limits(self) -> Mapping[str, str]:
        """Rule id -> reason for each documented limit of the backend; those rules skip as declared-limit."""
        return {}

    @pytest.fixture
    def expected_failures(self) -> Mapping[str, str]:
        """Rule id -> reason for each known failure; those rules run as strict expected failures."""
        return {}

    @pytest.fixture
    def conformance_time_scale(self, request: pytest.FixtureRequest) -> float:
        """Multiplier of every hang guard and wait; `--conformance-time-scale` sets it for slow providers."""
        value = request.config.getoption(SCALE_FIXTURE, default=None)
        return 1.0 if value is None else float(value)

    @pytest.fixture
    def conformance_profile(self, request: pytest.FixtureRequest) -> str:
        """The Hypothesis profile of generated cases (`ci`, `certify`, `dev`); `--conformance-profile` sets it."""
        value = request.config.getoption('conformance_profile', default=None)
        return 'ci' if value is None else str(value)

    @pytest.fixture(autouse=True)
    def _conformance_waivers(
        self,
        request: pytest.FixtureRequest,
        declared_limits: Mapping[str, str],
        expected_failures: Mapping[str, str],
    ) -> None:
        """Check that the waivers name known rules, and run `expected_failures` as strict xfails (limits: the guard)."""
        meta = rule_of(getattr(request.node, 'function', None))
        if meta is None or request.cls is None:
            return
        known = {known.id for known in catalog(request.cls)}
        problems = [
            problem
            for problem in (
                unknown_ids('declared_limits', declared_limits, known),
                unknown_ids('expected_failures', expected_failures, known),
            )
            if problem
        ]
        if problems:
            raise ConformanceConfigError(' '.join(problems))
        filed = request.config.stash.get(WAIVERS, None)
        from_file = {} if filed is None else {key: why for key, why in filed.entries.items() if key in known}
        both = set(declared_limits) & (set(expected_failures) | set(from_file))
        if both:
            raise ConformanceConfigError(
                f'rule ids are both declared limits and expected failures: {sorted(both)}; choose one for each'
            )
        if meta.id in expected_failures:
            reason = f'[{meta.qualified}] expected failure: {expected_failures[meta.id]}'
            request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))
        elif filed is not None and meta.id in from_file:
            reason = f'[{meta.qualified}] expected failure ({filed.name}): {from_file[meta.id]}'
            request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            loop = str(request.getfixturevalue('anyio_backend'))
            request.node.user_properties.append((FILED_PROPERTY, {'rule_id': meta.id, 'loop': loop}))
