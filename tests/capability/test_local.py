"""`LocalWorkspace(dir)` and `LocalWorkspace(dir, read_only=True)` pass the capability suite with no failure."""

from __future__ import annotations

import posixpath
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.workspaces import CommandResult, WorkspaceCommand, WorkspaceRef, WrapperWorkspace

from workspace_conformance.capability import Policy, WorkspaceCapabilitySuite


async def _remove_directory(ref: WorkspaceRef) -> None:
    shutil.rmtree(ref.id)


class TestLocalWorkspace(WorkspaceCapabilitySuite):
    @pytest.fixture
    def capability(self, tmp_path: Path) -> LocalWorkspace[None]:
        return LocalWorkspace(tmp_path / 'project')

    @pytest.fixture(autouse=True)
    def _project(self, tmp_path: Path) -> None:
        (tmp_path / 'project').mkdir()

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceRef], Awaitable[None]]:
        return _remove_directory


class TestReadOnlyLocalWorkspace(TestLocalWorkspace):
    engines_proven_by = 'TestLocalWorkspace'

    @pytest.fixture
    def capability(self, tmp_path: Path) -> LocalWorkspace[None]:
        (tmp_path / 'project' / 'README').write_text('read me')
        return LocalWorkspace(tmp_path / 'project', read_only=True)


class NoHiddenFiles(WrapperWorkspace):
    """A user's policy: no hidden files are written, and commands (which could write them) are refused."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        if posixpath.basename(path).startswith('.'):
            raise PermissionError(f'hidden files are not written: {path}')
        await super().write_bytes(path, data)

    async def run(self, command: WorkspaceCommand, **kwargs: Any) -> CommandResult:
        raise PermissionError('commands could write hidden files')


class TestLocalWorkspaceWithAPolicy(TestLocalWorkspace):
    engines_proven_by = 'TestLocalWorkspace'  # the durable rules take no `policy`: they would run exactly as there

    @pytest.fixture
    def policy(self) -> Policy:
        return NoHiddenFiles


ROOTED_POLICY_SUITE = '''
import posixpath
import pytest
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.workspaces import WorkspaceReadOnlyError, WrapperWorkspace
from workspace_conformance.capability import WorkspaceCapabilitySuite


class RootedWrites(WrapperWorkspace):
    """The Workspaces page's own policy: a write must really lead under the working dir; commands are refused."""

    async def write_bytes(self, path, data):
        root = await self.wrapped.realpath(await self.working_dir())
        target = await self.wrapped.realpath(await self.resolve(path))
        if posixpath.commonpath((root, target)) != root:
            raise WorkspaceReadOnlyError('outside the allowed root')
        await self.wrapped.write_bytes(path, data)

    async def run(self, command, **kwargs):
        raise WorkspaceReadOnlyError('commands bypass file policy')


class TestRooted(WorkspaceCapabilitySuite):
    @pytest.fixture
    def capability(self, tmp_path):
        (tmp_path / 'project').mkdir()
        return LocalWorkspace(tmp_path / 'project')

    @pytest.fixture
    def policy(self):
        return RootedWrites
'''


def test_the_docs_rooted_policy_passes_the_rooted_policy_rule(pytester: pytest.Pytester) -> None:
    # The docs' RootedWrites checks realpath(await resolve(path)): the rule runs on it (not a skip) and passes.
    pytester.makepyfile(test_rooted=ROOTED_POLICY_SUITE)
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-k', 'rooted_policy')
    outcomes = result.parseoutcomes()
    assert outcomes.get('passed', 0) >= 1 and not outcomes.get('failed') and not outcomes.get('skipped'), (
        result.stdout.str()[-3000:]
    )
