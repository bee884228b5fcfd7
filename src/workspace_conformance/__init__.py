"""Conformance suite, test doubles and certification for Pydantic AI workspace backends."""

from ._version import __version__
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

__all__ = (
    'AREAS',
    'LEVELS',
    'SKIP_KINDS',
    'ConformanceConfigError',
    'Rule',
    'RuleFailure',
    'WorkspaceBackendSuite',
    '__version__',
    'catalog',
    'rule',
    'rules',
)
