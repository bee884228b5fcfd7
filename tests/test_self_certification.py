"""The project certifies pydantic-ai's own backends with its suite: no failures, only classified skips."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.targets import local_target
from workspace_conformance.targets.local_shell import CommandsOnly

LOCAL = local_target()


class LocalFixtures:
    """Every optional fixture, built the way the `local` target builds them."""

    @pytest.fixture(scope='class')
    @classmethod
    def run_dir(cls, tmp_path_factory: pytest.TempPathFactory, anyio_backend: str) -> Path:
        return tmp_path_factory.mktemp(f'local-{anyio_backend}')

    @pytest.fixture
    def fresh_backend(self, run_dir: Path) -> Callable[[], WorkspaceBackend]:
        assert LOCAL.fresh_backend is not None
        build = LOCAL.fresh_backend
        return lambda: build(run_dir)

    @pytest.fixture
    def destructive_backend(self, run_dir: Path) -> Callable[[], WorkspaceBackend]:
        assert LOCAL.destructive_backend is not None
        build = LOCAL.destructive_backend
        return lambda: build(run_dir)

    @pytest.fixture
    def attach_backend(self, run_dir: Path) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        assert LOCAL.attach_backend is not None
        build = LOCAL.attach_backend
        return lambda ref: build(run_dir, ref)

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        assert LOCAL.destroy_environment is not None
        return LOCAL.destroy_environment


class TestLocalWorkspaceBackend(LocalFixtures, WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, run_dir: Path) -> LocalWorkspaceBackend:
        (run_dir / 'shared').mkdir()
        return LocalWorkspaceBackend(run_dir / 'shared')


class TestCommandsOnlyLocal(LocalFixtures, WorkspaceBackendSuite):
    """File rules go through pydantic-ai's shell-derived filesystem."""

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, run_dir: Path) -> CommandsOnly:
        (run_dir / 'shared').mkdir()
        return CommandsOnly(LocalWorkspaceBackend(run_dir / 'shared'))
