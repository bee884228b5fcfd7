"""Certifying what a target's sandbox keeps apart from the host: the `WorkspaceIsolationSuite` class for a target."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

import pytest

from ..isolation import WorkspaceIsolationSuite, checked_claims
from ..vocabulary import ISOLATION_AREAS
from ._run_fixtures import run_fixtures
from .base import Target, TargetError
from .capability import finish_suite

__all__ = ('OWN_CLAIMS', 'claims_option', 'isolation_suite_for')

OWN_CLAIMS = 'target'
"""`--isolation` without a value: the claims the target states (`Target.isolation_claims`)."""


def claims_option(value: str) -> frozenset[str] | None:
    """The claims an `--isolation` value names (`none`: no claim), None for the target's own; a one-line TargetError."""
    if value == OWN_CLAIMS:
        return None
    names = [name.strip() for name in value.split(',') if name.strip()]
    if names == ['none']:
        return frozenset()
    unknown = [name for name in names if name not in ISOLATION_AREAS]
    if unknown or not names:
        said = f'unknown claims {", ".join(unknown)}' if unknown else 'no claim'
        raise TargetError(
            f'--isolation names {said}: give none, or a comma-separated set of {", ".join(ISOLATION_AREAS)}, '
            "or no value for the target's own claims"
        )
    return frozenset(names)


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

    `claims` replaces the target's own `isolation_claims`, `expected_failures` its `isolation_expected_failures`. Its
    backends are built under `run_dir / isolation-<event loop>`. One event loop is enough by default: the rules
    watch the host, and a sandbox's isolation does not depend on the loop its client runs on.
    """
    claimed = checked_claims(target.isolation_claims if claims is None else claims)

    class TestIsolation(WorkspaceIsolationSuite):
        conformance_summary = summary
        anyio_backend, run_root, backend = run_fixtures(target, run_dir, anyio_backends, 'isolation-')

        @pytest.fixture
        def isolation_claims(self) -> frozenset[str]:
            return claimed

    waived = target.isolation_expected_failures if expected_failures is None else expected_failures
    finish_suite(TestIsolation, {}, waived, only=only, time_scale=time_scale)  # declared limits: the backend rules'
    TestIsolation.__name__ = TestIsolation.__qualname__ = name or f'TestIsolation[{target.name}]'
    return TestIsolation
