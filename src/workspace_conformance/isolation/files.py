"""Rules on the host's files: a command in the sandbox neither reads, changes nor lists a canary file of the host."""

from __future__ import annotations

import shlex
import tempfile

from pydantic_ai.workspaces import WorkspaceBackend

from ..authoring import lacking, rule, skip
from ._support import HostCanaries, host_directory, in_sandbox

__all__ = ('FileIsolationRules',)

_WHY = 'claims files isolation'


class FileIsolationRules:
    """Rules on host files planted in the host's temp directory and beside the workspace."""

    @rule(area='files', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='files')
    async def test_host_temp_file_is_unreadable(self, backend: WorkspaceBackend, host_canaries: HostCanaries) -> None:
        """A command cannot read a file in the host's temporary directory by its absolute host path."""
        canary = host_canaries.temp_file()
        result = await in_sandbox(backend, f'cat {shlex.quote(str(canary.path))}')
        assert canary.secret not in result.stdout, (
            f'`cat {canary.path}` in the sandbox printed the host file (exit {result.exit_code}); the backend {_WHY}'
        )

    @rule(area='files', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='files')
    async def test_file_beside_the_workspace_is_unreadable(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """A command cannot read a host file next to the workspace's host directory by its absolute host path."""
        host_canaries.check_claim()
        directory = await host_directory(backend)
        if directory is None:
            skip('not-applicable', "the workspace's working directory is not a host directory the runner sees")
        canary = host_canaries.file_beside(directory)
        result = await in_sandbox(backend, f'cat {shlex.quote(str(canary.path))}')
        assert canary.secret not in result.stdout, (
            f'`cat {canary.path}` in the sandbox printed the host file beside the workspace {directory} '
            f'(exit {result.exit_code}); the backend {_WHY}'
        )

    @rule(area='files', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='files')
    async def test_host_temp_file_cannot_be_changed(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """Writing to the absolute host path of a file in the host's temporary directory leaves that file as it was."""
        canary = host_canaries.temp_file()
        result = await in_sandbox(backend, f"printf 'changed from the sandbox\\n' > {shlex.quote(str(canary.path))}")
        after = canary.path.read_text() if canary.path.exists() else None
        assert after == canary.content, (
            f'a write to {canary.path} in the sandbox (exit {result.exit_code}) changed the host file to '
            f'{after!r}; the backend {_WHY}'
        )

    @rule(area='files', requires=['commands', 'posix_shell'], since='0.3.0', alone=True, claim='files')
    async def test_host_temp_listing_hides_the_canary(
        self, backend: WorkspaceBackend, host_canaries: HostCanaries
    ) -> None:
        """Listing the host's temporary directory from the sandbox does not show a file the host has there."""
        canary = host_canaries.temp_file()
        listed = tempfile.gettempdir()
        result = await in_sandbox(backend, f'ls -a {shlex.quote(listed)}')
        if result.exit_code == 127:
            lacking(('ls',), f'`ls -a {listed}` exited 127', 'no `ls` in the sandbox (exit 127)')
        assert canary.path.name not in result.stdout, (
            f'`ls -a {listed}` in the sandbox lists the host file {canary.path.name}; the backend {_WHY}'
        )
