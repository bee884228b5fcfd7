"""The harness's tool capabilities certified (pydantic-ai-harness 0.62, in the `targets` session's environment), and
the findings of docs/findings.md reproduced, one test each.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.capabilities import CombinedCapability
from pydantic_ai.workspaces import Workspace

from workspace_conformance import WorkspaceToolSuite
from workspace_conformance.authoring import calling, watching_host
from workspace_conformance.doubles import memory_backend
from workspace_conformance.targets.tools import TOOL_TARGETS, tool_suite_for
from workspace_conformance.tools._discovery import discover_tools
from workspace_conformance.tools._host_audit import decoy_host
from workspace_conformance.tools._sweeps import ToolRuns
from workspace_conformance.tools._workspaces import Seeds, files_only_with_symlinks

harness = pytest.importorskip('pydantic_ai_harness', reason='pydantic-ai-harness is installed only in `nox -s targets`')

TestHarnessFileSystem = tool_suite_for(TOOL_TARGETS['harness-filesystem'], name='TestHarnessFileSystem')
TestHarnessShell = tool_suite_for(TOOL_TARGETS['harness-shell'], name='TestHarnessShell')
TestHarnessCoder = tool_suite_for(TOOL_TARGETS['harness-coder'], name='TestHarnessCoder')


class TestHarnessFileSystemWithOutputLimits(WorkspaceToolSuite):
    """FileSystem with ToolOutputLimits beside it, whose spills go to the run's workspace."""

    @pytest.fixture
    def capability(self) -> Any:
        return CombinedCapability([harness.FileSystem(), harness.ToolOutputLimits()])


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


@pytest.mark.anyio
async def test_f1_filesystem_reads_and_writes_through_a_symlink_without_realpath(tmp_path: Path) -> None:
    runs = ToolRuns(tmp_path)
    recorded = await runs.sweep(harness.FileSystem(), None, files_only_with_symlinks(), {}, symlinked=True)
    read = next(call for call in recorded.calls if call.tool == 'read_file')
    assert f'outside secret {runs.token}' in read.content, read
    assert any(path.endswith('/outside/new.txt') for path in recorded.decoys_changed), recorded.decoys_changed


@pytest.mark.anyio
async def test_f2_coder_with_agent_folders_stats_the_host_home_at_run_start(tmp_path: Path) -> None:
    seeds = Seeds('f2')
    with decoy_host(tmp_path, seeds) as (_, home, _tmp), watching_host() as watch, calling('run start'):
        await discover_tools(harness.Coder(agent_folders='agents'), Workspace(memory_backend()))
    stats = [event.path for event in watch.events if event.event == 'os.stat']
    assert os.path.join(home, '.agents', 'agents') in stats, watch.events


@pytest.mark.anyio
@pytest.mark.parametrize(
    ('build', 'kept'),
    [
        (lambda: harness.Planning.from_spec(backend='sqlite'), '.agent-plan.db'),
        (lambda: harness.StepPersistence.from_spec(backend='file'), '.step-persistence'),
    ],
    ids=['planning-sqlite', 'step-persistence-file'],
)
async def test_f3_stores_from_spec_keep_their_state_in_the_host_cwd(
    build: Callable[[], Any], kept: str, tmp_path: Path
) -> None:
    with decoy_host(tmp_path, Seeds('f3')) as (cwd, _, _), watching_host(block=False) as watch, calling('run'):
        await discover_tools(build(), Workspace(memory_backend()))
    assert (Path(cwd) / kept).exists(), (sorted(os.listdir(cwd)), watch.events)
    assert any(kept in event.path for event in watch.events if event.kind in ('write', 'connect')), watch.events


@pytest.mark.anyio
async def test_f4_shell_offers_no_tools_without_commands_and_says_nothing(recwarn: pytest.WarningsRecorder) -> None:
    assert await discover_tools(harness.Shell(), Workspace(memory_backend())) == []
    assert not recwarn.list
