"""The `@rule` decorator, rule metadata, and the catalog built from a suite class."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal, TypeVar, get_args

import pytest

from ._guard import guarded

__all__ = ('AREAS', 'LEVELS', 'REQUIREMENTS', 'Rule', 'catalog', 'rule', 'rule_of')

Level = Literal['core', 'extended']
Area = Literal['commands', 'files', 'symlinks', 'lifecycle', 'processes', 'properties', 'stateful']
Requirement = Literal[
    'commands', 'filesystem', 'realpath', 'posix_shell', 'fresh', 'attach', 'destroy', 'ln', 'mkfifo', 'setsid'
]

AREAS: tuple[str, ...] = get_args(Area)
LEVELS: tuple[str, ...] = get_args(Level)
REQUIREMENTS: tuple[str, ...] = get_args(Requirement)

RULE_ATTRIBUTE = '__conformance_rule__'
MARKER = 'conformance_rule'
DEFAULT_TIMEOUT = 60.0
"""Seconds a rule may run before its hang guard fails it, before `conformance_time_scale` scales it."""

TestMethod = TypeVar('TestMethod', bound=Callable[..., Coroutine[Any, Any, None]])


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One checkable clause of the workspace contract, as declared by `@rule` on a test method."""

    id: str
    """The test method's name without `test_`; stable, used by `declared_limits` and reports."""
    area: str
    level: str
    clause: str
    """The contract sentence the rule checks: the first paragraph of the method's docstring."""
    requires: tuple[str, ...]
    since: str
    """The workspace-conformance version that introduced the rule."""
    upstream: bool
    """Whether pydantic-ai's own `WorkspaceBackendSuite` has a rule of this name."""
    timeout: float
    """The hang guard's bound in seconds at time scale 1."""

    @property
    def qualified(self) -> str:
        """`area/id`, the prefix every skip reason and failure message carries."""
        return f'{self.area}/{self.id}'

    def to_dict(self) -> dict[str, Any]:
        """The rule as builtin types, for JSON and for pytest-xdist."""
        return {**asdict(self), 'requires': list(self.requires)}


def _clause(function: Callable[..., object]) -> str:
    doc = inspect.getdoc(function)
    if not doc:
        raise TypeError(f'rule {function.__qualname__} needs a docstring stating the clause it checks')
    return ' '.join(doc.split('\n\n', 1)[0].split())


def rule(
    *,
    area: Area,
    level: Level = 'core',
    requires: Iterable[Requirement] = (),
    since: str = '0.1.0',
    upstream: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> Callable[[TestMethod], TestMethod]:
    """Declare a test method as a conformance rule: tag it, and bound it with a hang guard."""
    unknown = set(requires) - set(REQUIREMENTS)
    if area not in AREAS or level not in LEVELS or unknown:
        raise ValueError(f'bad rule declaration: area={area!r} level={level!r} unknown requirements={sorted(unknown)}')

    def decorate(function: TestMethod) -> TestMethod:
        name = function.__name__
        if not name.startswith('test_'):
            raise TypeError(f'a rule method must be named test_<rule id>, got {name!r}')
        meta = Rule(
            id=name.removeprefix('test_'),
            area=area,
            level=level,
            clause=_clause(function),
            requires=tuple(requires),
            since=since,
            upstream=upstream,
            timeout=timeout,
        )
        wrapper = guarded(function, meta)
        setattr(wrapper, RULE_ATTRIBUTE, meta)
        marked: TestMethod = pytest.mark.conformance_rule(id=meta.id, area=meta.area, level=meta.level)(wrapper)
        return marked

    return decorate


def rule_of(function: object) -> Rule | None:
    """The `Rule` a test method was declared with, or `None` for an ordinary function."""
    meta = getattr(function, RULE_ATTRIBUTE, None)
    return meta if isinstance(meta, Rule) else None


def catalog(suite: type) -> tuple[Rule, ...]:
    """Every rule of a suite class, in area order then definition order, read from its decorators."""
    rules: dict[str, Rule] = {}
    for klass in reversed(suite.__mro__):
        for name, member in vars(klass).items():
            meta = rule_of(member)
            if meta is not None and name.startswith('test_'):
                rules[meta.id] = meta
            elif name.startswith('test_'):
                # A subclass replaced a rule with a plain attribute: it is no longer one of ours.
                rules.pop(name.removeprefix('test_'), None)
    order = {area: index for index, area in enumerate(AREAS)}
    return tuple(sorted(rules.values(), key=lambda meta: order[meta.area]))
