"""Our suite is a drop-in superset of pydantic-ai's: every upstream rule and fixture exists here too."""

from __future__ import annotations

import inspect

import pytest
from pydantic_ai.workspaces import conformance as upstream

from workspace_conformance import WorkspaceBackendSuite, rules
from workspace_conformance.engine._support import pydantic_ai_at_least


def _upstream_rule_names() -> list[str]:
    return sorted(name for name in vars(upstream.WorkspaceBackendSuite) if name.startswith('test_'))


def _fixture_names(klass: type) -> set[str]:
    names = set()
    for base in klass.__mro__:
        for name, value in vars(base).items():
            if 'FixtureFunctionDefinition' in type(value).__name__ or hasattr(value, '_pytestfixturefunction'):
                names.add(name)
    return names


def test_every_upstream_rule_is_one_of_ours() -> None:
    ours = {f'test_{rule.id}' for rule in rules()}
    missing = [name for name in _upstream_rule_names() if name not in ours]
    assert not missing, f'upstream rules missing from WorkspaceBackendSuite: {missing}'


def test_rules_named_after_upstream_are_marked_upstream() -> None:
    # `upstream` means pydantic-ai 2.68's suite has the rule; an older installed suite may lack a few.
    upstream_names = set(_upstream_rule_names())
    for rule in rules():
        if f'test_{rule.id}' in upstream_names:
            assert rule.upstream, rule.id
        elif pydantic_ai_at_least((2, 68)):
            assert not rule.upstream, rule.id


def test_every_upstream_fixture_exists() -> None:
    theirs = _fixture_names(upstream.WorkspaceBackendSuite)
    assert {'backend', 'fresh_backend', 'has_real_posix_shell'} <= theirs, theirs
    missing = sorted(theirs - _fixture_names(WorkspaceBackendSuite))
    assert not missing, f'upstream fixtures missing from WorkspaceBackendSuite: {missing}'


@pytest.mark.parametrize('rule_name', _upstream_rule_names())
def test_upstream_rule_takes_only_fixtures_upstream_users_can_provide(rule_name: str) -> None:
    # A project that swaps the import keeps working: no rule of upstream's name needs a fixture it never heard of.
    known = _fixture_names(upstream.WorkspaceBackendSuite) | {
        'self',
        'request',
        'make_symlink',
        'conformance_time_scale',
    }
    parameters = set(inspect.signature(getattr(WorkspaceBackendSuite, rule_name)).parameters)
    assert parameters <= known | _fixture_names(WorkspaceBackendSuite), parameters - known
