"""Rules on which workspace a run gets when several are on offer: history, `workspace=`, overrides, other suppliers."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.test import TestModel
from pydantic_ai.workspaces import (
    UnavailableWorkspace,
    Workspace,
    WorkspaceRef,
    WorkspaceUnavailableError,
    WrapperWorkspace,
)
from pydantic_ai.workspaces.unavailable import NO_WORKSPACE
from pydantic_ai.workspaces.workspace import workspace_layers

from ..authoring import (
    described,
    expect_error,
    first_use,
    own_environment,
    ref_text,
    rule,
    run_context,
    select,
    select_some,
)
from ..doubles import InMemoryBackend, InMemoryProvider, ProviderCapability
from ._shared import marked_run, shape, stored
from ._support import (
    MARK_PREFIX,
    Mark,
    assert_started_fresh,
    error_text,
    is_fixed,
    leave_mark,
    run_in_agent,
    watching_io,
)

__all__ = ('PrecedenceRules',)


@contextlib.asynccontextmanager
async def _marked(capability: AbstractCapability[Any], deps: object) -> AsyncIterator[tuple[Mark, WorkspaceRef, Any]]:
    """A first run that left a mark (the mark, its ref and the result); the mark is removed afterwards."""
    mark, ref, result = await marked_run(capability, deps)
    try:
        yield mark, ref, result
    finally:
        await mark.remove(result.workspace)


_Unavailable = tuple[bool, object, dict[str, str]]


async def _unavailable(workspace: Workspace) -> _Unavailable:
    """What a tool sees of a workspace that should be unavailable: `attached`, `ref`, and how each operation ends."""
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        'working_dir': lambda: workspace.working_dir(),
        'read_bytes': lambda: workspace.read_bytes('f'),
        'write_bytes': lambda: workspace.write_bytes('f', b'x'),
        'list_dir': lambda: workspace.list_dir('.'),
        'stat': lambda: workspace.stat('f'),
        'exists': lambda: workspace.exists('f'),
        'make_dir': lambda: workspace.make_dir('d'),
        'remove': lambda: workspace.remove('f'),
        'run': lambda: workspace.run(['true']),
    }
    ended: dict[str, str] = {}
    for name, call in calls.items():
        try:
            await call()
            ended[name] = 'returned'
        except Exception as error:
            ended[name] = error_text(error) if isinstance(error, WorkspaceUnavailableError) else f'!{error_text(error)}'
    return workspace.attached, workspace.ref, ended


def _check_unavailable(seen: _Unavailable, reason: str, how: str) -> None:
    """Fail unless the tool saw no attached workspace, no ref, and every operation raise `WorkspaceUnavailableError`."""
    attached, ref, ended = seen
    assert not attached and ref is None, f'in {how}, the tool saw attached={attached} and ref={ref!r}'
    wrong = {name: how_it_ended for name, how_it_ended in ended.items() if how_it_ended.startswith(('!', 'returned'))}
    assert not wrong, f'in {how}, operations did not raise WorkspaceUnavailableError: {wrong}'
    unexplained = [name for name, how_it_ended in ended.items() if reason not in how_it_ended]
    assert not unexplained, f'in {how}, {unexplained} raised without the reason the caller gave ({reason!r})'


class _Given(WrapperWorkspace):
    """A caller's own policy layer around a workspace no capability supplied."""


async def _given_workspace() -> tuple[Workspace, Mark]:
    """A live workspace of the caller's, not the capability's, with a mark in it."""
    given = _Given(Workspace(InMemoryBackend(lazy=False)))
    return given, await leave_mark(given)


async def _check_given_is_used(
    capability: AbstractCapability[Any], deps: object, given: Workspace, mark: Mark, how: str, **run: Any
) -> None:
    """A run made as `run` says gives its tools `given` as is: its layers, its ref and its files."""

    async def view(workspace: Workspace) -> tuple[object, ...]:
        return tuple(workspace_layers(workspace)), workspace.ref, await mark.seen_in(workspace), described(workspace)

    *seen, shown = (await run_in_agent(capability, view, deps=deps, **run))[0]
    wanted = [tuple(workspace_layers(given)), given.ref, True]
    assert seen == wanted, f'{how}: the tools got {shown} (its files: {seen[2]}), not the given {described(given)}'


def _policy_of(workspace: Workspace) -> tuple[object, ...]:
    """The layers and `read_only` of a workspace: the policy its tools work under."""
    return tuple(workspace_layers(workspace)), workspace.read_only


async def _policy_seen(workspace: Workspace) -> tuple[object, ...]:
    return _policy_of(workspace)


def _shape_of(workspace: Workspace | None) -> tuple[object, ...] | None:
    return None if workspace is None else shape(workspace)


async def _read_missing(workspace: Workspace) -> bytes:
    return await workspace.read_bytes(f'{MARK_PREFIX}missing-{uuid.uuid4().hex[:12]}')


class _ErrorWatch(AbstractCapability[Any]):
    """Records the workspace ref `on_run_error` sees, and lets the error end the run."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[WorkspaceRef | None] = []

    async def on_run_error(self, ctx: RunContext[Any], *, error: BaseException) -> Any:
        self.refs.append(ctx.workspace.ref)
        raise error


def _second_supplier() -> ProviderCapability:
    """Another workspace capability, in memory, placed after the one under test."""
    return ProviderCapability(InMemoryProvider(files={'OTHER': b'other supplier'}), id='workspace_conformance_second')


class PrecedenceRules:
    """Rules on agent runs offered several workspaces: the latest history ref, `workspace=`, overrides, suppliers."""

    @rule(area='runs', must='A02')
    async def test_a_latest_response_without_a_ref_starts_fresh(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A history whose latest response records no ref starts afresh, even if an older response names one."""
        fixed = own_environment(capability, deps)
        later: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart('elsewhere now')]),
            ModelResponse(parts=[TextPart('no workspace this turn')], workspace_ref=None),
        ]
        async with _marked(capability, deps) as (mark, ref, result):
            seen, fresh = await run_in_agent(
                capability, mark.seen_in, deps=deps, message_history=stored(result) + later
            )
        assert_started_fresh(fixed, fresh.workspace.ref, seen, mark, ref, 'a run whose latest response records no ref')

    @rule(area='runs', must='A04')
    async def test_an_unrecognized_workspace_ref_ends_the_run(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`workspace=<a ref the capability does not own>` ends the run with an error; it never runs elsewhere."""
        own = await first_use(own_environment(capability, deps))
        unknown = f'workspace-conformance-unknown-{uuid.uuid4().hex}'
        for forged in (WorkspaceRef(provider=own.provider, id=unknown), WorkspaceRef(provider=unknown, id=own.id)):
            try:
                _, result = await run_in_agent(capability, first_use, deps=deps, workspace=forged)
            except AssertionError:
                raise
            except Exception:  # pydantic-ai's UserError, or the capability's own clear refusal
                continue
            raise AssertionError(f'a run given workspace={ref_text(forged)} ran in {result.workspace.ref!r}')

    @rule(area='runs', must='A06')
    async def test_a_live_workspace_given_to_the_run_is_used_as_is(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A live `Workspace` or backend passed as `workspace=` reaches the tools as is: same layers, ref and files."""
        given, mark = await _given_workspace()
        await _check_given_is_used(capability, deps, given, mark, 'workspace=<a Workspace>', workspace=given)
        backend = Workspace(given.backend)
        await _check_given_is_used(capability, deps, backend, mark, 'workspace=<a backend>', workspace=given.backend)

    @rule(area='runs', must='A12')
    async def test_agent_override_beats_every_other_choice(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`agent.override(workspace=...)` beats the capability, the history's ref and the run's `workspace=`."""
        given, given_mark = await _given_workspace()
        async with _marked(capability, deps) as (_, ref, result):
            await _check_given_is_used(
                capability,
                deps,
                given,
                given_mark,
                f'agent.override(workspace=...) around a run given {ref_text(ref)} by history and workspace=',
                message_history=stored(result),
                workspace=ref,
                agent_hook=lambda agent: agent.override(workspace=given),
            )

    @rule(area='runs', must='F13')
    async def test_a_callers_unavailable_workspace_is_final(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Tools get a caller's `UnavailableWorkspace`, unattached, every call failing; `NO_WORKSPACE` is no choice."""
        reason = f'workspace-conformance: this run has no workspace ({uuid.uuid4().hex[:8]})'
        with watching_io() as watch:
            seen, _ = await run_in_agent(capability, _unavailable, deps=deps, workspace=UnavailableWorkspace(reason))
        _check_unavailable(seen, reason, 'a run given UnavailableWorkspace(reason)')
        assert not watch.seen, f'a run given UnavailableWorkspace(...) changed the host: {"; ".join(watch.seen[:5])}'
        plain, _ = await run_in_agent(None, _unavailable, deps=deps)
        _check_unavailable(plain, '', 'a run of an agent with no workspace capability')
        used, _ = await run_in_agent(capability, first_use, deps=deps, workspace=Workspace(NO_WORKSPACE))
        fixed = own_environment(capability, deps)
        assert not is_fixed(fixed) or used == fixed.ref, f'a run given NO_WORKSPACE ran in {ref_text(used)}'

    @rule(area='runs', must='A09')
    async def test_an_untouched_run_records_no_new_ref(self, capability: AbstractCapability[Any], deps: object) -> None:
        """A run that never touches a lazy workspace records no ref; an untouched later turn keeps the history's."""

        async def untouched(workspace: Workspace) -> None:
            return None

        fixed = own_environment(capability, deps)
        _, idle = await run_in_agent(capability, untouched, deps=deps)
        recorded = idle.response.workspace_ref
        expected = fixed.ref if is_fixed(fixed) else None
        assert recorded == expected == idle.workspace.ref, (
            f'an untouched run recorded {recorded!r} (result.workspace.ref {idle.workspace.ref!r}), not {expected!r}'
        )
        if recorded is not None:
            used, _ = await run_in_agent(capability, first_use, deps=deps, message_history=stored(idle))
            assert used == recorded, f'a run over that history ran in {ref_text(used)}, not {ref_text(recorded)}'
        ref, result = await run_in_agent(capability, first_use, deps=deps)
        _, turn = await run_in_agent(capability, untouched, deps=deps, message_history=stored(result))
        kept = [m.workspace_ref for m in turn.new_messages() if isinstance(m, ModelResponse)]
        assert kept and all(seen == ref for seen in kept) and turn.workspace.ref == ref, (
            f'an untouched turn over a history in {ref_text(ref)} recorded {kept} (result.workspace.ref '
            f'{turn.workspace.ref!r})'
        )

    @rule(area='runs', must='C08')
    async def test_the_policy_reaches_tools_in_a_continued_run(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A run continued from its ref gives tools the policy of the first run, as `get_workspace(ref)` supplies it."""

        async def used(workspace: Workspace) -> tuple[object, ...]:
            await first_use(workspace)
            return _policy_of(workspace)

        first, result = await run_in_agent(capability, used, deps=deps)
        ref = result.workspace.ref
        later, _ = await run_in_agent(capability, _policy_seen, deps=deps, message_history=stored(result))
        supplied = _policy_of(select_some(capability, deps, ref))
        assert first == later == supplied, (
            f'policies (layers, read_only): first run {first}, run continued from {ref!r} {later}, '
            f'get_workspace(ref) {supplied}'
        )

    @rule(area='runs', must='A15')
    async def test_a_failed_run_keeps_its_environment(self, capability: AbstractCapability[Any], deps: object) -> None:
        """A tool's path error ends the run with that error, `on_run_error` sees the run's ref, and the env lives on."""
        watch = _ErrorWatch()
        async with _marked(capability, deps) as (mark, ref, result):
            with expect_error(FileNotFoundError, 'a run whose tool reads a missing file'):
                await run_in_agent(capability, _read_missing, deps=deps, message_history=stored(result), also=[watch])
            seen, later = await run_in_agent(capability, mark.seen_in, deps=deps, workspace=ref)
        assert watch.refs == [ref], f'on_run_error saw workspace refs {watch.refs}, not [{ref_text(ref)}]'
        assert seen and later.workspace.ref == ref, (
            f'after the failed run, a run given {ref_text(ref)} reached {later.workspace.ref!r}, not seeing its mark'
        )

    @rule(area='selection', must='C10')
    async def test_capabilities_are_asked_in_order(self, capability: AbstractCapability[Any], deps: object) -> None:
        """Placed before another supplier, the capability declines that one's history ref and supplies without one."""
        second = _second_supplier()
        other, made = await run_in_agent(second, leave_mark)
        theirs = made.workspace.ref
        seen, later = await run_in_agent(
            capability, other.seen_in, deps=deps, message_history=stored(made), also=[second]
        )
        assert seen and later.workspace.ref == theirs, (
            f"a history in the second supplier's {ref_text(theirs)} ran in {later.workspace.ref!r}"
        )
        creations = second.provider.creations
        used, _ = await run_in_agent(capability, first_use, deps=deps, also=[second])
        fixed = own_environment(capability, deps)
        assert second.provider.creations == creations and used.id not in second.provider.environments, (
            f'without a ref the run ran in {ref_text(used)} of the second supplier, not the first'
        )
        assert not is_fixed(fixed) or used == fixed.ref, f'without a ref the run ran in {ref_text(used)}'

    @rule(area='selection', must='C15')
    async def test_for_run_keeps_the_selected_workspace(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """The capability `for_run` returns supplies the workspace the capability itself does, so runs may use it."""
        instance = await capability.for_run(run_context(deps))
        ref = await first_use(own_environment(capability, deps))
        for asked in (None, ref):
            before, after = select(capability, deps, asked), select(instance, deps, asked)
            assert _shape_of(before) == _shape_of(after), (
                f'for ref {asked!r} the capability supplies {described(before)}, its for_run result {described(after)}'
            )
        try:
            await run_in_agent(capability, first_use, deps=deps)
        except UserError as error:
            raise AssertionError(f'a run over the capability failed: {error_text(error)}') from error

    @rule(area='selection', must='C09')
    async def test_a_workspace_capability_is_not_deferred(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A capability that supplies workspaces is not `defer_loading=True`: an agent can be built with it."""
        try:
            Agent(TestModel(), capabilities=[capability])
        except UserError as error:
            raise AssertionError(f'Agent(capabilities=[capability]) raised {error_text(error)}') from error
