"""`Rule`, the metadata `@rule` attaches to a test method, and `rule_of`, which reads it back: a leaf module.

It imports nothing of the engine, so the guard, the requirements, the batching and the hooks can all name a rule.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .._frames import machinery_hidden
from ..vocabulary import PLATFORMS, Area, Level, Platform, Requirement, Strength

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('DEFAULT_TIMEOUT', 'LIFECYCLE_REQUIREMENTS', 'RULE_ATTRIBUTE', 'Rule', 'rule_of')

RULE_ATTRIBUTE = '__conformance_rule__'
DEFAULT_TIMEOUT = 60.0
"""Seconds a rule may run before its hang guard fails it, before `conformance_time_scale` scales it."""
LIFECYCLE_REQUIREMENTS: tuple[Requirement, ...] = ('fresh', 'attach', 'destroy', 'sacrificial', 'stop', 'restart')
"""Requirements of rules that build, attach to or destroy environments: such rules always run alone."""


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One checkable clause of the workspace contract, as declared by `@rule` on a test method."""

    id: str
    """The test method's name without `test_`; stable, used by `declared_limits` and reports."""
    area: Area
    level: Level
    clause: str
    """The contract sentence the rule checks: the first paragraph of the method's docstring."""
    requires: tuple[Requirement, ...]
    since: str
    """The workspace-conformance version that introduced the rule."""
    upstream: bool
    """Whether pydantic-ai's own `WorkspaceBackendSuite` has a rule of this name."""
    timeout: float
    """The hang guard's bound in seconds at time scale 1."""
    contract: str | None = None
    """The oldest pydantic-ai (`major.minor`) whose contract states the clause; older ones make it not applicable."""
    alone: bool = False
    """Whether the rule runs by itself, never concurrently with other rules (`runs_alone` adds the lifecycle ones)."""
    strength: Strength = 'should'
    """How much its clause binds: `must` decides the verdict, `should` advises, `claim` binds where it is claimed."""
    clause_id: str | None = None
    """The id of the contract clause (docs/contract-clauses.toml) that makes a `must` rule one; None otherwise."""
    claim: str | None = None
    """Of a `claim` rule, the claim the subject declares for the rule to bind (`claims` fixture); None otherwise."""
    platforms: tuple[Platform, ...] = PLATFORMS
    """The workspace platforms the rule has a form for; on any other it is not applicable (skip kind `platform`)."""
    grounds: tuple[str, ...] = ()
    """The backend operations the rule is the first check of: when it fails on an error of one, every other rule
    that ended on an error of that operation is reported `broken` by it, not as one more failure."""

    @property
    def runs_alone(self) -> bool:
        """Whether the rule must run by itself: declared `alone`, or it builds, attaches or destroys environments."""
        return self.alone or bool(set(self.requires) & set(LIFECYCLE_REQUIREMENTS))

    @property
    def qualified(self) -> str:
        """`area/id`, the prefix every skip reason and failure message carries."""
        return f'{self.area}/{self.id}'

    def to_dict(self) -> dict[str, Any]:
        """The rule as builtin types, for JSON and for pytest-xdist."""
        return {
            **asdict(self),
            'requires': list(self.requires),
            'platforms': list(self.platforms),
            'grounds': list(self.grounds),
            'runs_alone': self.runs_alone,
        }


def rule_of(function: object) -> Rule | None:
    """The `Rule` a test method was declared with, or `None` for an ordinary function."""
    meta = getattr(function, RULE_ATTRIBUTE, None)
    return meta if isinstance(meta, Rule) else None
