"""`declared_limits` and `expected_failures` (ours only), and `destructive_backend` without `fresh_backend`.

The backend's SDK turns CRLF into LF in command output: a real defect, which it waives as an expected failure.
"""

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from _local import DestroysByRemovingTheDirectory
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
)

CORRECT = False  # it normalizes line endings


class CrlfNormalizingBackend(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        return CommandResult(
            exit_code=result.exit_code,
            stdout=result.stdout.replace('\r\n', '\n'),
            stderr=result.stderr.replace('\r\n', '\n'),
        )


class TestWaivers(DestroysByRemovingTheDirectory, WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return CrlfNormalizingBackend(tmp_path_factory.mktemp('workspace'))

    @pytest.fixture
    def destructive_backend(self, tmp_path: Path) -> Callable[[], WorkspaceBackend]:
        def build() -> WorkspaceBackend:
            root = tmp_path / 'sacrificial' / 'deep' / 'workspace'
            root.mkdir(parents=True, exist_ok=True)
            return CrlfNormalizingBackend(root)

        return build

    @pytest.fixture
    def attach_backend(self) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: CrlfNormalizingBackend(ref.id)

    @pytest.fixture
    def declared_limits(self) -> Mapping[str, str]:
        return {'a_detached_process_outlives_the_command': 'our sandbox reaps every session when a command returns'}

    @pytest.fixture
    def expected_failures(self) -> Mapping[str, str]:
        return {'line_endings_and_tabs_are_preserved': 'the SDK normalizes CRLF to LF in command output'}
