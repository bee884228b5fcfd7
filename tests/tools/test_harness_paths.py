"""The harness's path-configured capabilities, with relative and absolute paths, keep to the workspace: on an
in-memory workspace neither a run's start nor any tool call touches the host's cwd, home or temp dir.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.workspaces import Workspace

from workspace_conformance.authoring import calling, watching_host
from workspace_conformance.doubles import memory_backend
from workspace_conformance.tools._discovery import discover_tools
from workspace_conformance.tools._host_audit import decoy_host
from workspace_conformance.tools._sweeps import ToolRuns
from workspace_conformance.tools._workspaces import Seeds, default_workspaces

harness = pytest.importorskip('pydantic_ai_harness', reason='pydantic-ai-harness is installed only in `nox -s targets`')

FileStore = pytest.importorskip('pydantic_ai_harness.memory').FileStore
MEMORY = next(where for where in default_workspaces() if where.name == 'memory')
VARIANTS: dict[str, Callable[[], Any]] = {
    'memory-file-store-relative': lambda: harness.Memory(store=FileStore('memories')),
    'memory-file-store-absolute': lambda: harness.Memory(store=FileStore('/workspace/memories')),
    'skills-relative': lambda: harness.Skills('skills', missing_directories='skip'),
    'skills-absolute': lambda: harness.Skills('/workspace/skills', missing_directories='skip'),
    'coder-agent-folders-absolute': lambda: harness.Coder(agent_folders=['/workspace/agents']),
}


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


@pytest.mark.anyio
@pytest.mark.parametrize('variant', VARIANTS)
async def test_a_path_configured_capability_touches_no_host_path(variant: str, tmp_path: Path) -> None:
    capability = VARIANTS[variant]()
    # A run may refuse to start (say, a missing directory): that is allowed, touching the host is not.
    with (
        decoy_host(tmp_path / 'start', Seeds('paths')) as decoys,
        watching_host(block=False) as watch,
        calling('run start'),
        contextlib.suppress(Exception),
    ):
        await discover_tools(capability, Workspace(memory_backend()))
    started = [str(event) for event in watch.events if any(event.path.startswith(d + os.sep) for d in decoys)]
    recorded = await ToolRuns(tmp_path / 'calls').sweep(capability, None, MEMORY, {})
    called = [f'{call}: {event}' for call in recorded.calls for event in call.host]
    assert not started + called + recorded.decoys_changed, (started, called, recorded.decoys_changed)
