"""Each tool mutant certified as is, with no waiver: a broken tool of a kind the contract forbids fails a `must` rule.

The mutant gate runs every mutant as strict expected failures, which proves each rule fails; this proves what the
failure weighs. A tool that writes, reads or runs on the host, bypasses read-only through the backend, falls back to
the host with no workspace or ignores the history's ref is `not certified`. A mutant of a claim rule is `not certified`
while it makes the claim, and certified with the advisory listed when it does not; a `should` rule's mutant is
certified with its advisory.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from workspace_conformance.reports.model import Report
from workspace_conformance.tools import tool_rules

from ..mutants.gallery import load_tool_mutants
from ..mutants.registry import ToolMutant

MUTANTS = load_tool_mutants()
STRENGTH = {meta.id: meta.strength for meta in tool_rules()}

SUITES = """
import dataclasses

from workspace_conformance.targets.tools import ToolTarget, tool_suite_for
from tests.mutants.gallery import load_tool_mutants

for _mutant in load_tool_mutants():
    for _claimed in ((True, False) if _mutant.claims else (True,)):
        _target = ToolTarget(
            name=f'{_mutant.name}{"" if _claimed else "-unclaimed"}',
            description=_mutant.bug,
            build=_mutant.build,
            workspaces=_mutant.workspaces,
            claims=_mutant.claims if _claimed else frozenset(),
        )
        _suite = tool_suite_for(_target, only=_mutant.kills, time_scale=0.25, name=f'Test_{_target.name}')
        globals()[_suite.__name__] = _suite
"""


def _kinds(mutant: ToolMutant) -> set[str]:
    return {STRENGTH[rule] for rule in mutant.kills}


def test_every_tool_rule_has_a_mutant_that_weighs_what_its_strength_says() -> None:
    killed = {rule for mutant in MUTANTS for rule in mutant.kills}
    assert killed == set(STRENGTH), set(STRENGTH) - killed
    for mutant in MUTANTS:
        claims = {meta.claim for meta in tool_rules() if meta.id in mutant.kills and meta.claim is not None}
        assert claims <= mutant.claims, f'{mutant.name} kills a claim rule: it must make the claim {claims}'


@pytest.mark.slow
def test_broken_tools_fail_must_rules_and_advise_on_the_others(pytester: pytest.Pytester) -> None:
    root = Path(__file__).resolve().parents[2]
    pytester.syspathinsert(root)
    pytester.makepyfile(test_mutants=SUITES)
    pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-p', 'no:randomly', '--conformance-report', 'out')
    report = Report.model_validate_json((pytester.path / 'out' / 'report.json').read_text())
    verdicts = {suite.suite_class.removeprefix('Test_'): suite for suite in report.suites}
    wrong: list[str] = []
    for mutant in MUTANTS:
        suite = verdicts[mutant.name]
        expected = 'not certified' if _kinds(mutant) & {'must', 'claim'} else 'certified'
        if suite.verdict != expected:
            wrong.append(f'{mutant.name} ({mutant.bug}): {suite.verdict}, expected {expected}')
        if expected == 'certified' and not any(rule.status == 'advisory' for rule in suite.rules):
            wrong.append(f'{mutant.name}: certified with no advisory listed')
        if mutant.claims:
            unclaimed = verdicts[f'{mutant.name}-unclaimed']
            advised = [rule.rule_id for rule in unclaimed.rules if rule.status == 'advisory']
            if unclaimed.verdict != 'certified' or sorted(advised) != sorted(mutant.kills):
                wrong.append(f'{mutant.name} without its claim: {unclaimed.verdict}, advisories {advised}')
    assert not wrong, '\n'.join(wrong)
    assert dataclasses.is_dataclass(MUTANTS[0])
