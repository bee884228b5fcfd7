"""A parametrized backend fixture: the native local backend ('a') and its commands only ('b')."""

from pathlib import Path

import pytest
from _delegating import CommandsOf
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


class TestParametrized(WorkspaceBackendSuite):
    @pytest.fixture(params=['a', 'b'])
    def backend(self, request: pytest.FixtureRequest, tmp_path: Path) -> WorkspaceBackend:
        local = LocalWorkspaceBackend(tmp_path)
        return local if request.param == 'a' else CommandsOf(local)
