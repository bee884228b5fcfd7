"""Rules on the policies a capability's workspace carries: read-only refusals, user wrappers, durable policy."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import (
    Workspace,
    WorkspaceReadOnlyError,
    WrapperWorkspace,
)

from ..authoring import expect_error, first_use, own_environment, rule, skip, supplied
from ._shared import stacked
from ._support import MARK_PREFIX, Policy, error_text

__all__ = ('PolicyRules',)


def _refusals(workspace: Workspace, name: str) -> list[tuple[str, Callable[[], Awaitable[object]]]]:
    """Every change the read-only clause names, as `(what, call)`."""
    return [
        ('write_bytes', lambda: workspace.write_bytes(name, b'x')),
        ('write_text', lambda: workspace.write_text(name, 'x')),
        ('make_dir', lambda: workspace.make_dir(name)),
        ('remove', lambda: workspace.remove(name)),
        ('run', lambda: workspace.run(['true'])),
        ('run(cwd=...)', lambda: workspace.run(['true'], cwd='.')),
    ]


async def _check_read_only(workspace: Workspace, how: str) -> None:
    """The read-only clause on `workspace`: it reports `read_only`, refuses every change, and still reads."""
    assert workspace.read_only, f'{how} reports read_only False'
    root = await workspace.working_dir()
    for what, call in _refusals(workspace, f'{MARK_PREFIX}read-only'):
        with expect_error(WorkspaceReadOnlyError, f'{what} on {how}'):
            await call()
    try:
        entries = await workspace.list_dir(root)
        assert await workspace.exists(root), f'exists(working dir) on {how} is False'
        for entry in entries:
            if not entry.is_dir:
                await workspace.read_bytes(entry.path)
                break
    except WorkspaceReadOnlyError as error:
        raise AssertionError(f'a read on {how} was refused: {error_text(error)}') from error


class PolicyRules:
    """Rules on the wrappers around the capability's workspace."""

    @rule(area='policies', requires=['read_only'], must='F06')
    async def test_a_read_only_workspace_refuses_every_change(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A `read_only` workspace refuses writes, make_dir, remove and run (cwd= too), and still reads."""
        await _check_read_only(own_environment(capability, deps), "the capability's read-only workspace")

    @rule(area='policies', requires=['read_only'], must='F14')
    async def test_read_only_holds_through_stacked_wrappers(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """Inside more wrappers a read-only workspace still reports `read_only` and refuses every change."""
        workspace = own_environment(capability, deps)
        wrapped = stacked(workspace)
        await _check_read_only(wrapped, 'the read-only workspace inside two more wrappers')

    @rule(area='policies')
    async def test_a_workspace_that_refuses_changes_reports_read_only(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A workspace refusing writes with `WorkspaceReadOnlyError` reports `read_only`, so tools can drop them."""
        workspace = own_environment(capability, deps)
        await first_use(workspace)
        name = f'{MARK_PREFIX}probe'
        try:
            await workspace.write_text(name, 'x')
        except WorkspaceReadOnlyError:
            assert workspace.read_only, (
                'the workspace refuses write_text with WorkspaceReadOnlyError but reports read_only False'
            )
            return
        await workspace.remove(name)
        assert not workspace.read_only, 'the workspace reports read_only but wrote a file'

    @rule(area='policies', level='extended', requires=['policy', 'workspace_commands'], must='W06')
    async def test_a_policy_wrapper_keeps_its_policy_when_commands_exist(
        self, capability: AbstractCapability[Any], deps: object, policy: Policy | None
    ) -> None:
        """A policy wrapper that refuses a file change also refuses, or prevents, that change made by `run()`."""
        inner = own_environment(capability, deps)
        await first_use(inner)
        wrapped = supplied(policy, 'policy')(inner)
        name = f'{MARK_PREFIX}policy'
        try:
            await wrapped.write_text(name, 'x')
        except Exception:
            pass  # the policy refuses it: the same change through a command must not happen either
        else:
            await inner.remove(name)
            skip('not-applicable', 'the policy allows writing a file in the working dir')  # seen only by trying
        try:
            await wrapped.run(['sh', '-c', 'printf x > "$1"', 'sh', name])
        except Exception:
            return  # the wrapper refuses or overrides run()
        made = await inner.exists(name)
        if made:
            await inner.remove(name)
        assert not made, f'the policy refuses write_text({name!r}) but run() wrote it: commands bypass the policy'

    @rule(area='policies', level='extended', requires=['policy', 'workspace_commands'], since='0.3.0')
    async def test_a_rooted_policy_checks_where_a_write_really_leads(
        self, capability: AbstractCapability[Any], deps: object, policy: Policy | None
    ) -> None:
        """A policy refusing writes outside the working dir refuses one through a link inside it that leads out.

        It checks `realpath(await resolve(path))`, not the path as written. No write reaches the environment: the
        policy wraps a layer that records each write it lets through and forwards none.
        """
        inner = own_environment(capability, deps)
        await first_use(inner)
        recorded = _RecordsWrites(inner)
        wrapped = supplied(policy, 'policy')(recorded)
        outside = f'/{MARK_PREFIX}policy-outside-{uuid.uuid4().hex[:8]}'
        if not await recorded.lets_through(wrapped, f'{MARK_PREFIX}policy-inside'):
            skip('not-applicable', 'the policy refuses a write in the working dir too')  # seen only by trying
        if await recorded.lets_through(wrapped, outside):
            skip('not-applicable', f'the policy lets a write to {outside} outside the working dir through')
        link = f'{MARK_PREFIX}policy-link-{uuid.uuid4().hex[:8]}'
        # A dangling link to a missing path outside: nothing walks through it, and no write ever reaches it.
        made = await inner.run(['ln', '-s', outside, link])
        if made.exit_code != 0:
            skip('environment', f'`ln -s` in the working dir exited {made.exit_code}: {made.stderr[:200]}')
        try:
            through = f'{link}/probe'
            escaped = await recorded.lets_through(wrapped, through)
        finally:
            with anyio.CancelScope(shield=True):
                await inner.remove(link)
        assert not escaped, (
            f'the policy refuses write_bytes({outside!r}) but let write_bytes({through!r}) through '
            f'({link} -> {outside}): '
            'it checks the path as written, not realpath(await resolve(path))'
        )

    @rule(area='policies', must='W08')
    async def test_durable_policy_names_the_arguments_that_change_behaviour(
        self, capability: AbstractCapability[Any], deps: object, policy: Policy | None
    ) -> None:
        """Each wrapper layer built with its own arguments names them in `durable_policy()`, so a rebuild keeps them."""
        workspace = own_environment(capability, deps)
        layers: list[Workspace] = []
        for top in (workspace, *([policy(workspace)] if policy is not None else [])):
            layer: object = top
            while isinstance(layer, WrapperWorkspace):
                layers.append(layer)
                layer = layer.wrapped
        unnamed = [
            f'{type(layer).__qualname__}({", ".join(_own_arguments(type(layer)))})'
            for layer in layers
            if _own_arguments(type(layer)) and not layer.durable_policy()
        ]
        assert not unnamed, f'wrappers whose arguments change behaviour return durable_policy() == (): {unnamed}'


def _own_arguments(kind: type) -> list[str]:
    """The constructor arguments of a wrapper class beyond the workspace it wraps."""
    try:
        parameters = list(inspect.signature(kind).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.name != 'wrapped' and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


class _Reached(Exception):
    """Raised by `_RecordsWrites` in place of a write: the policy above it let the write through."""


class _RecordsWrites(WrapperWorkspace):
    """Below a policy: every write that reaches it is recorded and refused, so none reaches the environment."""

    def __init__(self, wrapped: Workspace) -> None:
        super().__init__(wrapped)
        self.reached: list[str] = []

    async def write_bytes(self, path: str, data: bytes) -> None:
        self.reached.append(path)
        raise _Reached(path)

    async def lets_through(self, policy: Workspace, path: str) -> bool:
        """Whether `policy.write_bytes(path)` got as far as this layer (any refusal above it is the policy's)."""
        before = len(self.reached)
        try:
            await policy.write_bytes(path, b'x')
        except _Reached:
            return True
        except Exception:
            pass
        return len(self.reached) > before
