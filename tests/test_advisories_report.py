"""An advisory (a failed `should` rule, or a claim not made) in every report format: listed, counted apart, never a
failure; the verdict is decided by the rules that bind, and `verify` refuses an advisory recorded on a `must` rule."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

from workspace_conformance.reports.model import Report, RuleOutcome, SuiteReport, advisories, summarize, verdict_of
from workspace_conformance.reports.render.html import render_html
from workspace_conformance.reports.render.junit import render_junit
from workspace_conformance.reports.render.markdown import render_markdown
from workspace_conformance.reports.render.terminal import write_summary
from workspace_conformance.reports.verify import _report_problems

from .runner import report_of


def _outcome(rule_id: str, outcome: str, strength: str = 'must', **more: Any) -> RuleOutcome:
    return RuleOutcome.model_validate(
        {
            'rule_id': rule_id,
            'area': 'bounds',
            'level': 'core',
            'strength': strength,
            'clause': f'the clause of {rule_id}',
            'anyio_backend': 'asyncio',
            'outcome': outcome,
            **more,
        }
    )


def _report(*results: RuleOutcome) -> Report:
    summaries = summarize(results)
    suite = SuiteReport(
        subject='m.py::TestTools',
        anyio_backends=['asyncio'],
        results=list(results),
        rules=summaries,
        verdict=verdict_of(summaries),
    )
    return report_of(suite)


ADVISED = _outcome(
    'huge_is_bounded', 'advisory', 'claim', reason='not claimed: `bounded`', observed='returned 1000000 characters'
)
HELD = _outcome('no_host_writes', 'passed')


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str | None = None, **markup: bool) -> None:
        self.lines.append(title or '')

    def write_line(self, line: str, **markup: bool) -> None:
        self.lines.append(line)


def test_an_advisory_never_changes_the_verdict_and_a_must_failure_does() -> None:
    assert _report(HELD, ADVISED).verdict == 'certified'
    assert [summary.rule_id for summary in advisories(_report(HELD, ADVISED).suites[0].rules)] == ['huge_is_bounded']
    assert _report(HELD, ADVISED, _outcome('x', 'failed', excerpt='boom')).verdict == 'not certified'
    # a gap of a rule that only advises changes nothing; one of a core must rule fails the run
    gap = {'skip_kind': 'environment', 'reason': 'no ln'}
    assert _report(HELD, _outcome('y', 'skipped', 'should', **gap)).verdict == 'certified'
    assert _report(HELD, _outcome('y', 'skipped', 'must', **gap)).verdict == 'not certified'


def test_every_format_lists_the_advisory_apart_from_failures() -> None:
    report = _report(HELD, ADVISED)
    writer = _Writer()
    write_summary(writer, report)
    text = '\n'.join(writer.lines)
    assert 'advisories (rules that do not bind here; never a failure):' in text
    assert '[bounds/huge_is_bounded] (core) advisory on asyncio (not claimed: `bounded`)' in text
    assert 'verdict: certified (1 passed, 0 failed, 1 advisories' in text and 'failures:' not in text
    markdown = render_markdown(report)
    assert '## Advisories' in markdown and 'returned 1000000 characters' in markdown and '## Failures' not in markdown
    assert 'advisory' in render_html(report)
    junit = ElementTree.fromstring(render_junit(report))
    skipped = junit.findall('.//testcase/skipped')
    assert [element.get('type') for element in skipped] == ['advisory'] and not junit.findall('.//failure')


def test_verify_refuses_an_advisory_on_a_must_rule_and_a_strength_that_is_not_the_catalogs() -> None:
    hidden = _report(HELD, _outcome('no_host_writes', 'advisory', 'must', reason='should', observed='wrote'))
    problems = _report_problems(hidden, 'report.json')
    assert any('an advisory on asyncio, but it is a must rule' in problem for problem in problems), problems
    lowered = _report(_outcome('no_host_writes', 'advisory', 'should', reason='should', observed='wrote'))
    problems = _report_problems(lowered, 'report.json')
    assert any('recorded as should, but the catalog says must' in problem for problem in problems), problems


def test_a_schema_1_report_reads_as_all_must() -> None:
    old = _report(HELD).model_dump(mode='json')
    old['schema_version'] = 1
    for key in ('results', 'rules'):
        for entry in old['suites'][0][key]:
            entry.pop('strength')
    loaded = Report.model_validate(old)
    assert {result.strength for result in loaded.suites[0].results} == {'must'}
