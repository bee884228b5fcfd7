"""Rules on the environment commands see: the runner's own variables, and secrets among them, stay out."""

from __future__ import annotations

from typing import Any

from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace

from ..authoring import CANARY, environment_of, leaked, own_environment, rule, runners_canary

__all__ = ('HygieneRules',)

LOCAL_INHERITED = frozenset({'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE'})
"""What `LocalWorkspace` commands inherit from this process, per its docs; nothing else reaches them."""


class HygieneRules:
    """Rules on what of the runner's environment reaches commands."""

    @rule(area='hygiene', requires=['workspace_commands'], must='S02')
    async def test_commands_do_not_see_the_runners_secrets(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A secret-looking variable in the runner's own environment is not visible to the workspace's commands."""
        with runners_canary() as secret:
            workspace = own_environment(capability, deps)  # selected with the secret set, as a run would be
            seen = await environment_of(workspace)
        found = leaked(seen, secret)
        assert not found, f"the runner's secret {CANARY} reached commands (as {found})"

    @rule(area='hygiene', requires=['local_workspace', 'workspace_commands', 'local_backend'], must='S01')
    async def test_local_commands_inherit_only_the_documented_variables(
        self, capability: LocalWorkspace[Any], deps: object
    ) -> None:
        """`LocalWorkspace` commands inherit only PATH, HOME, LANG, LC_ALL and LC_CTYPE, plus its own `env`."""
        workspace = own_environment(capability, deps)
        configured = set(capability.env or {})
        seen = await environment_of(workspace)
        extra = sorted(set(seen) - LOCAL_INHERITED - configured)
        assert not extra, f'commands inherit variables beyond {sorted(LOCAL_INHERITED)}: {extra}'
