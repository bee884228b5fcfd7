"""Certifying what a target's sandbox keeps apart from the host: the `WorkspaceIsolationSuite` class for a target."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import pytest
from pydantic_ai.workspaces import WorkspaceBackend

from ..isolation import WorkspaceIsolationSuite, checked_claims
from ._ledger import record_ref
from .base import Target
from .capability import finish_suite

__all__ = ('isolation_suite_for',)


def isolation_suite_for(
    target: Target,
    run_dir: Path | None = None,
    anyio_backends: Sequence[str] = ('asyncio',),
    *,
    claims: Collection[str] | None = None,
    only: Iterable[str] | None = None,
    expected_failures: Mapping[str, str] | None = None,
    time_scale: float | None = None,
    name: str | None = None,
    summary: bool = True,
) -> type[WorkspaceIsolationSuite]:
    """The one `WorkspaceIsolationSuite` subclass for a target (`certify --isolation`, the mutant gate).

    `claims` replaces the target's own `isolation_claims`. One event loop is enough by default: the rules watch the
    host, and a sandbox's isolation does not depend on the loop its client runs on.
    """
    claimed = checked_claims(target.isolation_claims if claims is None else claims)

    class TestIsolation(WorkspaceIsolationSuite):
        conformance_summary = summary

        @pytest.fixture(scope='class', params=list(anyio_backends))
        @classmethod
        def anyio_backend(cls, request: pytest.FixtureRequest) -> str:
            return str(request.param)

        @pytest.fixture(scope='class')
        @classmethod
        def run_root(cls, anyio_backend: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
            base = run_dir if run_dir is not None else tmp_path_factory.mktemp(f'{target.name}-isolation')
            return base / f'isolation-{anyio_backend}'

        @pytest.fixture(scope='class')
        @classmethod
        async def backend(cls, run_root: Path) -> AsyncIterator[WorkspaceBackend]:
            built = target.backend(run_root)
            if target.backend_awaits:
                built = await built  # type: ignore[misc]
            yield built
            record_ref(run_root.parent, built.ref)

        @pytest.fixture
        def isolation_claims(self) -> frozenset[str]:
            return claimed

    waived = {} if expected_failures is None else expected_failures
    finish_suite(TestIsolation, {}, waived, only=only, time_scale=time_scale)  # the target's limits: backend rules
    TestIsolation.__name__ = TestIsolation.__qualname__ = name or f'TestIsolation[{target.name}]'
    return TestIsolation
