"""`WorkspaceIsolationSuite`: rules on what a sandbox claims to keep apart from the host that runs it."""

from __future__ import annotations

import pytest

from ..authoring import Rule, catalog
from ._support import NO_CLAIMS, IsolationFixtures, checked_claims
from .environment import EnvironmentIsolationRules
from .files import FileIsolationRules
from .network import NetworkIsolationRules
from .processes import ProcessIsolationRules

__all__ = ('NO_CLAIMS', 'WorkspaceIsolationSuite', 'checked_claims', 'isolation_rules')


class WorkspaceIsolationSuite(
    FileIsolationRules, ProcessIsolationRules, EnvironmentIsolationRules, NetworkIsolationRules, IsolationFixtures
):
    """Subclass in a pytest module and provide `backend` and `isolation_claims`; each test method checks one rule.

    `isolation_claims` is what the backend claims to keep apart from the host: a set drawn from `files`, `processes`,
    `environment` and `network`. The rules of a claim not made are not applicable; a backend that claims nothing is
    reported as claiming no isolation, never as isolating. Before each rule the suite plants host canaries with fresh
    random tokens and removes them after it (see docs/isolation.md).
    """

    pytestmark = pytest.mark.anyio


def isolation_rules() -> tuple[Rule, ...]:
    """The catalog of every rule of `WorkspaceIsolationSuite`."""
    return catalog(WorkspaceIsolationSuite)
