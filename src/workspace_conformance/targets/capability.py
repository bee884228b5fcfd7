"""Certifying a capability: what a capability target builds, and the `WorkspaceCapabilitySuite` class for it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import Workspace, WorkspaceRef

from ..capability import WorkspaceCapabilitySuite
from ..capability._secrets import runners_secrets
from ..suite import narrow
from .base import CapabilitySetup

__all__ = ('CapabilitySetup', 'CapabilityTarget', 'capability_suite_for', 'finish_suite')


@dataclass(frozen=True, kw_only=True)
class CapabilityTarget:
    """Everything needed to certify one capability; `build` receives each rule's own scratch directory."""

    name: str
    description: str
    build: Callable[[Path], CapabilitySetup]
    declared_limits: Mapping[str, str] = field(default_factory=dict)
    expected_failures: Mapping[str, str] = field(default_factory=dict)


def capability_suite_for(
    target: CapabilityTarget,
    *,
    only: Iterable[str] | None = None,
    expected_failures: Mapping[str, str] | None = None,
    time_scale: float | None = None,
    name: str | None = None,
    summary: bool = True,
) -> type[WorkspaceCapabilitySuite]:
    """The one `WorkspaceCapabilitySuite` subclass for a capability target (`certify --capability`, the mutant gate)."""

    class TestCapability(WorkspaceCapabilitySuite):
        conformance_summary = summary

        @pytest.fixture
        def setup(self, tmp_path: Path) -> CapabilitySetup:
            return target.build(tmp_path)

        @pytest.fixture
        def capability(self, setup: CapabilitySetup) -> AbstractCapability[Any]:
            return setup.capability

        @pytest.fixture
        def deps(self, setup: CapabilitySetup) -> object:
            return setup.deps

        @pytest.fixture
        def destroy_environment(self, setup: CapabilitySetup) -> Callable[[WorkspaceRef], Awaitable[None]] | None:
            return setup.destroy_environment

        @pytest.fixture
        def foreign_refs(self, setup: CapabilitySetup) -> Sequence[WorkspaceRef]:
            return setup.foreign_refs

        @pytest.fixture
        def policy(self, setup: CapabilitySetup) -> Callable[[Workspace], Workspace] | None:
            return setup.policy

        @pytest.fixture
        def secrets(self, setup: CapabilitySetup) -> Sequence[str]:
            return runners_secrets() if setup.secrets is None else setup.secrets

    waived = target.expected_failures if expected_failures is None else expected_failures
    finish_suite(TestCapability, target.declared_limits, waived, only=only, time_scale=time_scale)
    TestCapability.__name__ = TestCapability.__qualname__ = name or f'TestCapability[{target.name}]'
    return TestCapability


def finish_suite(
    suite: type,
    declared_limits: Mapping[str, str],
    expected_failures: Mapping[str, str],
    *,
    only: Iterable[str] | None,
    time_scale: float | None,
) -> None:
    """Give a generated suite class its waivers and fixed time scale, and narrow it to `only`."""
    setattr(suite, 'declared_limits', pytest.fixture(lambda self: declared_limits, name='declared_limits'))  # noqa: B010
    waived = pytest.fixture(lambda self: expected_failures, name='expected_failures')
    setattr(suite, 'expected_failures', waived)  # noqa: B010
    if time_scale is not None:
        scale = pytest.fixture(lambda self: time_scale, name='conformance_time_scale')
        setattr(suite, 'conformance_time_scale', scale)  # noqa: B010
    if only is not None:
        narrow(suite, only)
