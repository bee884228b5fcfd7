"""A parametrized backend fixture: the native local backend ('a') and its commands only ('b')."""

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

if TYPE_CHECKING:
    from tests.parity.corpus._delegating import CommandsOf

    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from _delegating import CommandsOf
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


class TestParametrized(WorkspaceBackendSuite):
    @pytest.fixture(params=['a', 'b'])
    def backend(self, request: pytest.FixtureRequest, tmp_path: Path) -> WorkspaceBackend:
        local = LocalWorkspaceBackend(tmp_path)
        return local if request.param == 'a' else CommandsOf(local)
