"""`InMemoryProvider.capability()` passes the capability suite, in memory and over local directories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from pydantic_ai.workspaces import WorkspaceRef

from workspace_conformance.capability import WorkspaceCapabilitySuite
from workspace_conformance.doubles import InMemoryProvider, ProviderCapability


class TestInMemoryProviderCapability(WorkspaceCapabilitySuite):
    @pytest.fixture
    def provider(self) -> InMemoryProvider:
        return InMemoryProvider(files={'README': b'hello'})

    @pytest.fixture
    def capability(self, provider: InMemoryProvider) -> ProviderCapability:
        return provider.capability()

    @pytest.fixture
    def destroy_environment(self, provider: InMemoryProvider) -> Callable[[WorkspaceRef], Awaitable[None]]:
        return provider.destroy


class TestLocalProviderCapability(TestInMemoryProviderCapability):
    engines_proven_by = 'TestInMemoryProviderCapability'

    @pytest.fixture
    def provider(self, tmp_path: Path) -> InMemoryProvider:
        return InMemoryProvider(local_root=tmp_path / 'environments', files={'README': b'hello'})


class TestReadOnlyProviderCapability(TestInMemoryProviderCapability):
    engines_proven_by = 'TestInMemoryProviderCapability'

    @pytest.fixture
    def capability(self, provider: InMemoryProvider) -> ProviderCapability:
        return provider.capability(read_only=True)
