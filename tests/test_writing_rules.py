"""docs/writing-rules.md runs as written: project rules (on a backend, on a capability) made with `authoring` only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workspace_conformance import authoring
from workspace_conformance.reports.model import Report

DOC = (Path(__file__).resolve().parent.parent / 'docs' / 'writing-rules.md').read_text()
CODE = '\n\n'.join(re.findall(r'```python\n(.*?)```', DOC, re.DOTALL))


def test_the_example_uses_only_the_authoring_api() -> None:
    imported = re.findall(r'^from (workspace_conformance\S*) import (.+)$', CODE, re.MULTILINE)
    assert imported == [
        ('workspace_conformance', 'WorkspaceBackendSuite'),
        ('workspace_conformance.authoring', 'narrow, rule, scratch, workspace_of'),
        ('workspace_conformance', 'WorkspaceCapabilitySuite'),
        ('workspace_conformance.authoring', 'accepted, first_use, own_environment, rule'),
    ]
    helpers = ('narrow', 'rule', 'scratch', 'workspace_of', 'expect_error', 'skip', 'wait_until', 'commands_of')
    for name in (*helpers, 'own_environment', 'select', 'first_use', 'accepted', 'described'):
        assert name in authoring.__all__, name


@pytest.mark.slow  # a whole-suite run
def test_a_project_rule_is_reported_under_its_own_id_and_its_mutant_fails_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_my_rules=CODE)
    out = pytester.path / 'report'
    result = pytester.runpytest_subprocess(
        '-p',
        'no:cacheprovider',
        '-n',
        '2',
        '--conformance-report',
        str(out),
        '-k',
        'dotfiles or test_exists or another_provider',
    )
    outcomes = result.parseoutcomes()
    # The rule passes on the real backend on both event loops, and fails on the mutant (a strict xfail; an XPASS
    # would fail the run).
    assert outcomes.get('failed', 0) == 0 and outcomes.get('xfailed') == 2, result.stdout.str()[-3000:]
    report = Report.model_validate_json((out / 'report.json').read_text())
    ours = next(suite for suite in report.suites if suite.subject.endswith('::TestMyBackend'))
    own = [summary for summary in ours.rules if summary.rule_id == 'dotfiles_are_listed']
    assert [(s.area, s.level, s.status) for s in own] == [('files', 'extended', 'passed')]
    mutant = next(suite for suite in report.suites if suite.subject.endswith('::TestDotfilesRuleCanFail'))
    assert [(s.rule_id, s.status) for s in mutant.rules] == [('dotfiles_are_listed', 'gap')]
    failed = next(r for r in mutant.results if r.rule_id == 'dotfiles_are_listed')
    assert failed.outcome == 'xfailed' and 'lists names that start with a dot' in (failed.excerpt or ''), failed
    # The capability rule, made with the same API, is reported in its area on the capability's suite.
    capability = next(suite for suite in report.suites if suite.subject.endswith('::TestMyCapability'))
    mine = [
        (s.area, s.level, s.status) for s in capability.rules if s.rule_id == 'refs_of_another_provider_are_declined'
    ]
    assert mine == [('untrusted', 'extended', 'passed')], capability.rules
