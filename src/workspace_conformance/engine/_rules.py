"""The `@rule` decorator, rule metadata, and the catalog built from a suite class."""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from .._frames import machinery_hidden
from .._mirror import OPERATIONS
from ..vocabulary import (
    AREAS,
    CAPABILITY_AREAS,
    ISOLATION_AREAS,
    LEVELS,
    PLATFORMS,
    REQUIREMENTS,
    TOOL_AREAS,
    TOOL_CLAIMS,
    Area,
    Level,
    Platform,
    Requirement,
)
from ._guard import guarded
from ._requires import CAPABILITY_ONLY, POSIX_ONLY, POSIX_TOOLS
from ._rule import DEFAULT_TIMEOUT, RULE_ATTRIBUTE, Rule, rule_of

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'AREAS',
    'LEVELS',
    'REQUIREMENTS',
    'Area',
    'Level',
    'Override',
    'Requirement',
    'Rule',
    'catalog',
    'narrow',
    'overridden_rules',
    'rule',
    'rule_of',
)

NARROWED_ATTRIBUTE = '__conformance_narrowed__'

TestMethod = TypeVar('TestMethod', bound=Callable[..., Coroutine[Any, Any, None]])


def _clause(function: Callable[..., object]) -> str:
    doc = inspect.getdoc(function)
    if not doc:
        raise TypeError(f'rule {function.__qualname__} needs a docstring stating the clause it checks')
    return ' '.join(doc.split('\n\n', 1)[0].split())


def _claimable(area: Area, claim: str) -> bool:
    """Whether a rule of `area` may bind by `claim`: a tool claim in a tool area, or an isolation rule's own area."""
    return (area in TOOL_AREAS and claim in TOOL_CLAIMS) or (area in ISOLATION_AREAS and claim == area)


def _platforms(requires: Iterable[Requirement], platforms: Iterable[Platform] | None) -> tuple[Platform, ...]:
    """The platforms a rule declared, checked, or its default: 'posix' only where it needs commands or POSIX tools."""
    needs = set(requires)
    if platforms is None:
        return ('posix',) if needs & POSIX_ONLY else PLATFORMS
    declared = tuple(dict.fromkeys(platforms))
    if not declared or set(declared) - set(PLATFORMS):
        raise ValueError(f'bad rule declaration: platforms={declared!r} must name some of {list(PLATFORMS)}')
    tools = sorted(needs & POSIX_TOOLS)
    if 'windows' in declared and tools:
        raise ValueError(
            f"bad rule declaration: platforms={declared!r}, but a rule that requires {tools} has no 'windows' form: "
            "drop 'windows', or the requirement"
        )
    return declared


def rule(
    *,
    area: Area,
    level: Level = 'core',
    requires: Iterable[Requirement] = (),
    since: str = '0.1.0',
    upstream: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    contract: str | None = None,
    alone: bool = False,
    must: str | None = None,
    claim: str | None = None,
    platforms: Iterable[Platform] | None = None,
    grounds: Iterable[str] = (),
) -> Callable[[TestMethod], TestMethod]:
    """Declare a test method a rule: tag it, resolve its `requires` before the body, and bound it with a hang guard.

    A rule advises (strength `should`) unless it says why it binds: `must='B03'` names the contract clause (an id of
    docs/contract-clauses.toml) whose MUST it checks, `claim='bounded'` the claim a subject declares for it to bind.
    A new rule enters as `should` and graduates to `must` once its clause is a MUST and it holds on two real backends.
    `alone` keeps the rule out of concurrent runs: say it for a rule that measures time, counts processes or changes
    what other rules share; rules that need `fresh`, `attach`, `destroy` or `sacrificial` run alone anyway.
    `platforms` are the workspace platforms the body has a form for: by default both, except for a rule that needs
    commands or a POSIX tool (`POSIX_ONLY`), which is 'posix' only unless it says `platforms=('posix', 'windows')`.
    `grounds` names the backend operations (`'write_bytes'`) the rule is the first check of: where it fails on an
    error of one, the other rules that ended on an error of that operation are reported `broken`, pointing at it.
    """
    unknown = set(requires) - set(REQUIREMENTS)
    if area not in AREAS or level not in LEVELS or unknown:
        raise ValueError(f'bad rule declaration: area={area!r} level={level!r} unknown requirements={sorted(unknown)}')
    misplaced = set(requires) & CAPABILITY_ONLY if area not in CAPABILITY_AREAS else set()
    if misplaced:
        raise ValueError(
            f'bad rule declaration: {sorted(misplaced)} read a capability: area={area!r} is a backend area'
        )
    if contract is not None and not re.fullmatch(r'\d+\.\d+', contract):
        raise ValueError(f'bad rule declaration: contract={contract!r} must be a pydantic-ai version like "2.68"')
    if must is not None and claim is not None:
        raise ValueError(f'bad rule declaration: must={must!r} and claim={claim!r}: a claim binds only where declared')
    if must is not None and not re.fullmatch(r'[A-Z]\d{2}', must):
        raise ValueError(
            f'bad rule declaration: must={must!r} must be a clause id of docs/contract-clauses.toml, e.g. "B03"'
        )
    if claim is not None and not _claimable(area, claim):
        raise ValueError(
            f'bad rule declaration: claim={claim!r} in area={area!r}: a tool rule claims one of {list(TOOL_CLAIMS)}, '
            'an isolation rule its own area'
        )

    forms = _platforms(requires, platforms)
    grounded = tuple(grounds)
    strange = sorted(set(grounded) - set(OPERATIONS))
    if isinstance(grounds, str) or strange:
        raise ValueError(
            f'bad rule declaration: grounds={grounds!r} must be backend operations, a tuple of {list(OPERATIONS)}'
        )
    if grounded and must is None:
        raise ValueError(
            f'bad rule declaration: grounds={grounded!r} without must=: only a rule whose failure binds can be the '
            'cause other rules are broken by; name its clause (must="B33")'
        )

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
            contract=contract,
            alone=alone,
            strength='must' if must is not None else 'claim' if claim is not None else 'should',
            clause_id=must,
            claim=claim,
            platforms=forms,
            grounds=grounded,
        )
        wrapper = guarded(function, meta)
        setattr(wrapper, RULE_ATTRIBUTE, meta)
        marked: TestMethod = pytest.mark.conformance_rule(id=meta.id, area=meta.area, level=meta.level)(wrapper)
        return marked

    return decorate


def catalog(suite: type) -> tuple[Rule, ...]:
    """Every rule a suite class still runs, in area order then definition order, read from its decorators."""
    return _read(suite)[0]


@dataclass(frozen=True)
class Override:
    """A rule whose method a subclass replaced, skipped or deleted: it is reported as `overridden`, never lost."""

    rule: Rule
    how: str
    """What the subclass did: `replaced by the subclass`, `skipped by the subclass: <reason>`, `deleted ...`."""
    path: str
    """The file that holds the override (the subclass's module for a deleted rule)."""
    line: int
    """Its line, 1-based."""


def overridden_rules(suite: type) -> tuple[Override, ...]:
    """The rules of the suite's bases that a subclass overrode with something that is not a rule."""
    narrowed: frozenset[str] = getattr(suite, NARROWED_ATTRIBUTE, frozenset())
    return tuple(_override(*found) for found in _read(suite)[1] if found[0].id not in narrowed)


def narrow(suite: type, keep: Iterable[str]) -> None:
    """Leave only the rules `keep` names in `suite`, for tools that check one rule at a time (the mutant gate).

    The rules left out are not part of that suite at all, so they are neither run nor reported as overridden; a
    user's subclass that deletes a rule by hand is reported as overriding it instead.
    """
    kept = set(keep)
    unknown = kept - {meta.id for meta in catalog(suite)}
    if unknown:
        raise ValueError(f'narrow() names rules the suite does not have: {sorted(unknown)}')
    left_out = {meta.id for meta in catalog(suite)} - kept
    for rule_id in left_out:
        setattr(suite, f'test_{rule_id}', None)
    setattr(suite, NARROWED_ATTRIBUTE, frozenset(left_out) | getattr(suite, NARROWED_ATTRIBUTE, frozenset()))


def _read(suite: type) -> tuple[tuple[Rule, ...], tuple[tuple[Rule, object, type], ...]]:
    rules: dict[str, Rule] = {}
    overrides: dict[str, tuple[Rule, object, type]] = {}
    for klass in reversed(suite.__mro__):
        for name, member in vars(klass).items():
            if not name.startswith('test_'):
                continue
            meta = rule_of(member)
            rule_id = name.removeprefix('test_')
            if meta is not None:
                rules[meta.id] = meta
                overrides.pop(meta.id, None)
            elif rule_id in rules:
                overrides[rule_id] = (rules.pop(rule_id), member, klass)
    order: dict[str, int] = {area: index for index, area in enumerate(AREAS)}

    def key(meta: Rule) -> int:
        return order[meta.area]

    return (
        tuple(sorted(rules.values(), key=key)),
        tuple(sorted(overrides.values(), key=lambda found: key(found[0]))),
    )


def _override(meta: Rule, member: object, klass: type) -> Override:
    """How `klass` overrode the rule with `member`, and where, for the report and `pytest -rs`."""
    where: Any = member if callable(member) else klass
    try:
        path = inspect.getsourcefile(inspect.unwrap(where)) or '?'
        line = inspect.getsourcelines(inspect.unwrap(where))[1]
    except (OSError, TypeError):
        path, line = getattr(sys.modules.get(klass.__module__), '__file__', None) or '?', 1
    if not callable(member):
        return Override(meta, f'deleted by the subclass {klass.__qualname__} (set to {member!r})', path, line)
    skip_marks = [mark for mark in getattr(member, 'pytestmark', ()) if getattr(mark, 'name', None) == 'skip']
    if skip_marks:
        mark = skip_marks[0]
        reason = mark.kwargs.get('reason', mark.args[0] if mark.args else 'no reason given')
        return Override(meta, f'skipped by the subclass {klass.__qualname__}: {reason}', path, line)
    return Override(meta, f'replaced by the subclass {klass.__qualname__}', path, line)
