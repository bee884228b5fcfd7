"""Rules on the environment commands see: the runner's own variables, and secrets among them, stay out."""

from __future__ import annotations

from typing import Any

from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import LocalWorkspaceBackend

from ..authoring import CANARY, environment_of, leaked, rule, runners_canary, skip
from ._shared import workspace_running_commands

__all__ = ('HygieneRules',)

LOCAL_INHERITED = frozenset({'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE'})
"""What `LocalWorkspace` commands inherit from this process, per its docs; nothing else reaches them."""


class HygieneRules:
    """Rules on what of the runner's environment reaches commands."""

    @rule(area='hygiene')
    async def test_commands_do_not_see_the_runners_secrets(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A secret-looking variable in the runner's own environment is not visible to the workspace's commands."""
        with runners_canary() as secret:
            workspace = workspace_running_commands(capability, deps)
            seen = await environment_of(workspace)
        found = leaked(seen, secret)
        assert not found, f"the runner's secret {CANARY} reached commands (as {found})"

    @rule(area='hygiene')
    async def test_local_commands_inherit_only_the_documented_variables(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`LocalWorkspace` commands inherit only PATH, HOME, LANG, LC_ALL and LC_CTYPE, plus its own `env`."""
        if not isinstance(capability, LocalWorkspace):
            skip('not-applicable', 'the capability is not a LocalWorkspace: other sandboxes set variables of theirs')
        workspace = workspace_running_commands(capability, deps)
        if not isinstance(workspace.backend, LocalWorkspaceBackend):
            skip('not-applicable', 'the workspace is not a LocalWorkspaceBackend')
        configured = set(capability.env or {})
        seen = await environment_of(workspace)
        extra = sorted(set(seen) - LOCAL_INHERITED - configured)
        assert not extra, f'commands inherit variables beyond {sorted(LOCAL_INHERITED)}: {extra}'
