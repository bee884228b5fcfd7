"""Rules on the host's processes: a host process is neither visible from the sandbox nor signalled from it."""

from __future__ import annotations

from pydantic_ai.workspaces import WorkspaceBackend

from ..authoring import lacking, rule
from ._support import HostCanaries, attempts, in_sandbox

__all__ = ('ProcessIsolationRules',)

_LISTING = (
    'if command -v ps >/dev/null 2>&1; then echo "tried ps"; ps -eo args 2>/dev/null || ps 2>/dev/null; fi\n'
    'if [ -r /proc/self/cmdline ]; then echo "tried /proc"; '
    'for f in /proc/[0-9]*/cmdline; do cat "$f" 2>/dev/null; echo; done; fi\n'
)


class ProcessIsolationRules:
    """Rules on a host process with a marker in its argv, started before the rule and reaped after it."""

    @rule(area='processes', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='processes')
    async def test_host_process_is_invisible(self, backend: WorkspaceBackend, host_canaries: HostCanaries) -> None:
        """A host process does not show in the sandbox's `ps` or `/proc/*/cmdline`."""
        canary = host_canaries.process()
        result = await in_sandbox(backend, _LISTING)
        tried, _ = attempts(result)
        if not tried:
            why = 'the sandbox has neither `ps` nor a readable /proc to list processes with'
            lacking(('ps', '/proc/self/cmdline'), 'neither `ps` nor /proc/self/cmdline answered', why)
        assert canary.marker not in result.stdout, (
            f'the host process {canary.pid} (argv has {canary.marker}) shows in the sandbox through '
            f'{" and ".join(tried)}; the backend claims process isolation'
        )

    @rule(area='processes', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='processes')
    async def test_host_process_cannot_be_signalled(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """`kill -0` and `kill -TERM` of a host process's pid from the sandbox leave that process running."""
        canary = host_canaries.process()
        pid = canary.pid
        result = await in_sandbox(
            backend, f'kill -0 {pid} 2>/dev/null && echo "probed"; kill -TERM {pid} 2>/dev/null && echo "sent"; true'
        )
        # A delivered SIGTERM ends the sleeper at once; give the kernel a moment before looking.
        ended = await canary.ends_within(1)
        assert not ended, (
            f'the host process {pid} ended after `kill -TERM {pid}` in the sandbox (the sandbox said: '
            f'{result.stdout.split() or "nothing"}); the backend claims process isolation'
        )
