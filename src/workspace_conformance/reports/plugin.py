"""The pytest plugin: tags each rule's report, records outcomes per rule and anyio backend, prints the verdict.

Inert in a session that runs no conformance rule. Reports carry builtin types only, so pytest-xdist
workers send them to the controller unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from ..suite import SKIP_KINDS, catalog, rule_of
from .model import RuleOutcome, RuleSummary, SkipKind, summarize, verdict_of

__all__ = ('RECORDER_NAME', 'ConformanceRecorder', 'SubjectResults')

RECORDER_NAME = 'workspace-conformance-recorder'
PROPERTY = 'workspace_conformance'
_SKIP = re.compile(r'\[(?P<rule>[^\]\s]+)\] (?P<kind>' + '|'.join(SKIP_KINDS) + r'): (?P<why>.*)', re.DOTALL)
_EXCERPT_CHARS = 800


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup('workspace-conformance')
    group.addoption(
        '--conformance-time-scale',
        dest='conformance_time_scale',
        type=float,
        default=None,
        help='multiply every hang guard and wait of the conformance rules (e.g. 3 for a slow provider)',
    )
    group.addoption(
        '--conformance-profile',
        dest='conformance_profile',
        choices=['ci', 'certify', 'dev'],
        default=None,
        help='Hypothesis profile of the generated cases: ci (fast, repeatable; the default), certify (thorough, '
        'repeatable), dev (random, remembers failures)',
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line('markers', 'conformance_rule(id, area, level): a workspace conformance rule')
    config.pluginmanager.register(ConformanceRecorder(config), RECORDER_NAME)


def _anyio_backend(item: pytest.Item) -> str:
    callspec = getattr(item, 'callspec', None)
    if callspec is not None and 'anyio_backend' in callspec.params:
        return str(callspec.params['anyio_backend'])
    value = getattr(item, 'funcargs', {}).get('anyio_backend')
    return str(value[0] if isinstance(value, tuple) else value or 'asyncio')


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Tag the report of a rule with its metadata, as builtin types."""
    report = yield
    meta = rule_of(getattr(item, 'function', None))
    klass = getattr(item, 'cls', None)
    if meta is not None and klass is not None:
        report.user_properties.append(
            (
                PROPERTY,
                {
                    'subject': f'{item.nodeid.split("::")[0]}::{klass.__qualname__}',
                    'rule': meta.to_dict(),
                    'anyio_backend': _anyio_backend(item),
                    'suite_rules': [f'{r.id}|{r.area}|{r.level}' for r in catalog(klass)],
                    'summary': bool(getattr(klass, 'conformance_summary', True)),
                },
            )
        )
    return report


@dataclass
class SubjectResults:
    """Everything recorded for one suite class: its rule catalog and each rule's outcome per anyio backend."""

    subject: str
    summary: bool = True
    """Whether the terminal summary shows it; a suite class opts out with `conformance_summary = False`."""
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], RuleOutcome] = field(default_factory=dict)

    @property
    def anyio_backends(self) -> list[str]:
        return sorted({backend for _, backend in self.outcomes})

    def complete_outcomes(self) -> list[RuleOutcome]:
        """Every recorded outcome, plus `missing` for each catalog rule with no result on a backend that ran."""
        filled = dict(self.outcomes)
        for rule_id, (area, level) in self.expected.items():
            for backend in self.anyio_backends:
                filled.setdefault(
                    (rule_id, backend),
                    RuleOutcome(
                        rule_id=rule_id,
                        area=area,
                        level=level,
                        clause='',
                        anyio_backend=backend,
                        outcome='missing',
                        reason='no result was recorded (not collected, or its run crashed)',
                    ),
                )
        return list(filled.values())

    def summaries(self) -> list[RuleSummary]:
        return summarize(self.complete_outcomes())


def _merge(previous: RuleOutcome | None, report: pytest.TestReport, tag: dict[str, Any]) -> RuleOutcome | None:
    rule = tag['rule']
    duration = (previous.duration if previous else 0.0) + report.duration
    base: dict[str, Any] = {
        'rule_id': rule['id'],
        'area': rule['area'],
        'level': rule['level'],
        'clause': rule['clause'],
        'anyio_backend': tag['anyio_backend'],
        'duration': duration,
    }
    wasxfail = getattr(report, 'wasxfail', None)
    if report.when == 'teardown':
        if previous is None or not report.failed:
            return previous.model_copy(update={'duration': duration}) if previous else None
        if previous.outcome in ('failed', 'error'):
            return previous
        return RuleOutcome(**base, outcome='error', excerpt=_excerpt(report), reason='teardown failed')
    if report.passed:
        if report.when == 'setup':
            return None
        if wasxfail is not None:
            return RuleOutcome(**base, outcome='xpassed', reason=wasxfail)
        return RuleOutcome(**base, outcome='passed')
    if report.failed:
        if report.when == 'setup':
            return RuleOutcome(**base, outcome='error', excerpt=_excerpt(report))
        return RuleOutcome(**base, outcome='failed', excerpt=_excerpt(report))
    if wasxfail is not None:
        return RuleOutcome(
            **base, outcome='xfailed', reason=wasxfail.removeprefix('reason: '), excerpt=_excerpt(report)
        )
    reason = _skip_reason(report)
    matched = _SKIP.match(reason)
    if matched is None:
        return RuleOutcome(**base, outcome='skipped', skip_kind='unclassified', reason=reason)
    kind = cast(SkipKind, matched['kind'])
    return RuleOutcome(**base, outcome='skipped', skip_kind=kind, reason=matched['why'])


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix('Skipped: ')
    return str(longrepr)


def _excerpt(report: pytest.TestReport) -> str | None:
    crash = getattr(report.longrepr, 'reprcrash', None)
    text = getattr(crash, 'message', None) or report.longreprtext or ''
    text = text.strip()
    return text[:_EXCERPT_CHARS] + ('...' if len(text) > _EXCERPT_CHARS else '') if text else None


class ConformanceRecorder:
    """Collects the tagged reports of a session (the controller's, under xdist) and prints each suite's verdict."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.subjects: dict[str, SubjectResults] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        found = next((value for key, value in report.user_properties if key == PROPERTY), None)
        if not isinstance(found, dict):
            return
        tag: dict[str, Any] = found
        subject = self.subjects.setdefault(
            tag['subject'], SubjectResults(subject=tag['subject'], summary=tag.get('summary', True))
        )
        for entry in tag['suite_rules']:
            rule_id, area, level = entry.split('|')
            subject.expected.setdefault(rule_id, (area, level))
        key = (tag['rule']['id'], tag['anyio_backend'])
        merged = _merge(subject.outcomes.get(key), report, tag)
        if merged is not None:
            subject.outcomes[key] = merged

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for subject in self.subjects.values():
            if subject.summary:
                _write_summary(terminalreporter, subject)


def _write_summary(writer: Any, subject: SubjectResults) -> None:
    summaries = subject.summaries()
    verdict = verdict_of(summaries)
    writer.write_sep('=', f'workspace conformance: {subject.subject}')
    columns = ('passed', 'failed', 'gap', 'not-applicable', 'missing')
    writer.write_line(f'{"area":<10} {"level":<9}' + ''.join(f'{name:>15}' for name in columns))
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for summary in summaries:
        row = rows.setdefault((summary.area, summary.level), dict.fromkeys(columns, 0))
        row[summary.status] += 1
    for (area, level), row in sorted(rows.items()):
        writer.write_line(f'{area:<10} {level:<9}' + ''.join(f'{row[name]:>15}' for name in columns))
    for status in ('gap', 'failed', 'missing'):
        listed = [summary for summary in summaries if summary.status == status]
        if listed:
            writer.write_line({'gap': 'gaps:', 'failed': 'failures:', 'missing': 'missing:'}[status])
        for summary in listed:
            detail = (summary.detail or '').splitlines()
            writer.write_line(f'  [{summary.area}/{summary.rule_id}] ({summary.level}) {detail[0] if detail else ""}')
    counts = {name: sum(1 for summary in summaries if summary.status == name) for name in columns}
    backends = ', '.join(subject.anyio_backends)
    writer.write_line(
        f'verdict: {verdict} ({counts["passed"]} passed, {counts["failed"]} failed, {counts["gap"]} gaps, '
        f'{counts["not-applicable"]} not applicable, {counts["missing"]} missing; '
        f'{len(summaries)} rules on {backends})',
        bold=True,
        green=verdict == 'certified',
        yellow=verdict == 'partial',
        red=verdict == 'not certified',
    )
