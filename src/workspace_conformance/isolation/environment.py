"""Rules on the runner's environment: a variable set in the runner's process never reaches a sandboxed command."""

from __future__ import annotations

from pydantic_ai.workspaces import WorkspaceBackend

from ..authoring import lacking, rule
from ._support import HostCanaries, attempts, in_sandbox

__all__ = ('EnvironmentIsolationRules',)

_DUMP = (
    'if command -v env >/dev/null 2>&1; then echo "tried env"; env; fi\n'
    'if [ -r /proc/self/environ ]; then echo "tried /proc/self/environ"; cat /proc/self/environ; echo; fi\n'
)


class EnvironmentIsolationRules:
    """Rules on a variable with a unique name and value set in the runner's `os.environ` for the rule."""

    @rule(area='environment', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='environment')
    async def test_runner_variable_never_reaches_commands(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """A variable of the runner's environment shows in neither a command's `env` nor its `/proc/self/environ`."""
        name, value = host_canaries.variable()
        result = await in_sandbox(backend, _DUMP)
        tried, _ = attempts(result)
        if not tried:
            why = 'the sandbox has neither `env` nor a readable /proc/self/environ'
            lacking(('env', '/proc/self/environ'), 'neither `env` nor /proc/self/environ answered', why)
        found = [what for what, text in (('name', name), ('value', value)) if text in result.stdout]
        assert not found, (
            f"the runner's variable {name} reaches the sandbox's commands (its {' and '.join(found)} in "
            f'{" or ".join(tried)}); the backend claims environment isolation'
        )
