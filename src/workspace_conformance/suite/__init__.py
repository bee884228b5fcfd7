"""`WorkspaceBackendSuite`: every conformance rule, composed from one class per area of the contract."""

from __future__ import annotations

import pytest

from ..engine._failures import RuleFailure, clip
from ..engine._guard import current_run, unresponsive
from ..engine._rules import (
    AREAS,
    LEVELS,
    REQUIREMENTS,
    Override,
    Rule,
    catalog,
    narrow,
    overridden_rules,
    rule,
    rule_of,
)
from ..engine._support import SKIP_KINDS, ConformanceConfigError, SuiteFixtures, skip
from ..engine._tracing import hangs_of
from ..engine._versions import pydantic_ai_version
from .caps import CapRules
from .commands import CommandRules
from .env import EnvRules
from .environment import EnvironmentRules
from .file_edges import FileEdgeRules
from .files import FileRules
from .lifecycle import LifecycleRules
from .platforms import PlatformRules
from .processes import ProcessRules
from .properties import PropertyRules
from .restarts import RestartRules
from .sessions import SessionRules
from .stateful import StatefulRules
from .symlinks import SymlinkRules

__all__ = (
    'AREAS',
    'LEVELS',
    'REQUIREMENTS',
    'SKIP_KINDS',
    'ConformanceConfigError',
    'Override',
    'Rule',
    'RuleFailure',
    'WorkspaceBackendSuite',
    'catalog',
    'clip',
    'current_run',
    'hangs_of',
    'narrow',
    'overridden_rules',
    'pydantic_ai_version',
    'rule',
    'rule_of',
    'rules',
    'skip',
    'unresponsive',
)


class WorkspaceBackendSuite(  # pytest runs the last base's rules first: the platform rules (2.78) go last
    PlatformRules,
    SessionRules,
    CommandRules,
    EnvRules,
    FileEdgeRules,
    FileRules,
    CapRules,
    SymlinkRules,
    LifecycleRules,
    ProcessRules,
    PropertyRules,
    StatefulRules,
    RestartRules,
    EnvironmentRules,
    SuiteFixtures,
):
    """Subclass in a pytest module and provide a `backend` fixture; each test method checks one rule.

    A drop-in superset of `pydantic_ai.workspaces.conformance.WorkspaceBackendSuite`: the same fixtures,
    switches and rule names, plus the rules of this toolkit, classified skips and hang guards.
    """

    pytestmark = pytest.mark.anyio


def rules() -> tuple[Rule, ...]:
    """The catalog of every rule of `WorkspaceBackendSuite`."""
    return catalog(WorkspaceBackendSuite)
