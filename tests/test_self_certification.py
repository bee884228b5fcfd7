"""The project certifies pydantic-ai's own backends with its suite: no failures, only classified skips.

Through the one adapter `certify` uses (`targets.suite_for`), so what is certified here is what `certify` runs.
"""

from __future__ import annotations

from workspace_conformance.targets import local_target, resolve_target, suite_for

TestLocalWorkspaceBackend = suite_for(local_target(), name='TestLocalWorkspaceBackend')
# File rules go through pydantic-ai's shell-derived filesystem. On asyncio: `nox -s targets` certifies local-shell
# on both loops (test_an_in_process_target_joins_the_matrix), and TestLocalWorkspaceBackend runs trio here.
TestCommandsOnlyLocal = suite_for(
    resolve_target('local-shell', run_id='self-certification'), name='TestCommandsOnlyLocal', anyio_backends=['asyncio']
)
