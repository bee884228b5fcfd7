"""Conformance suite, test doubles and certification for Pydantic AI workspace backends."""

from ._version import __version__
from .capability import WorkspaceCapabilitySuite, capability_rules
from .isolation import WorkspaceIsolationSuite, isolation_rules
from .suite import (
    AREAS,
    LEVELS,
    SKIP_KINDS,
    ConformanceConfigError,
    Rule,
    RuleFailure,
    WorkspaceBackendSuite,
    catalog,
    rule,
    rules,
)
from .tools import WorkspaceToolSuite, tool_rules

__all__ = (
    'AREAS',
    'LEVELS',
    'SKIP_KINDS',
    'ConformanceConfigError',
    'Rule',
    'RuleFailure',
    'WorkspaceBackendSuite',
    'WorkspaceCapabilitySuite',
    'WorkspaceIsolationSuite',
    'WorkspaceToolSuite',
    '__version__',
    'capability_rules',
    'catalog',
    'isolation_rules',
    'rule',
    'rules',
    'tool_rules',
)
