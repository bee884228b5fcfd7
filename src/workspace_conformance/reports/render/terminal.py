"""The terminal summary: the same `Report` every other format renders, as counts per area, listings and verdicts."""

from __future__ import annotations

from typing import Any, Protocol

from ..model import Report, RuleSummary, SuiteReport
from ._counts import STATUSES

__all__ = ('TerminalWriter', 'write_summary')


class TerminalWriter(Protocol):
    """What the summary needs of pytest's terminal reporter."""

    def write_sep(self, sep: str, title: str | None = ..., **markup: bool) -> Any: ...

    def write_line(self, line: str, **markup: bool) -> Any: ...


def write_summary(writer: TerminalWriter, report: Report, *, hidden: frozenset[str] = frozenset()) -> None:
    """Each suite of `report` (but those in `hidden`): counts per area and level, every gap, override, failure."""
    for suite in report.suites:
        if suite.subject not in hidden:
            _write_suite(writer, suite)
            _write_loop_tie_hint(writer, suite)


def _write_suite(writer: TerminalWriter, suite: SuiteReport) -> None:
    summaries = suite.rules
    writer.write_sep('=', f'workspace conformance: {suite.subject}')
    writer.write_line(f'{"area":<10} {"level":<9}' + ''.join(f'{name:>15}' for name in STATUSES))
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for summary in summaries:
        row = rows.setdefault((summary.area, summary.level), dict.fromkeys(STATUSES, 0))
        row[summary.status] += 1
    for (area, level), row in sorted(rows.items()):
        writer.write_line(f'{area:<10} {level:<9}' + ''.join(f'{row[name]:>15}' for name in STATUSES))
    overridden = [summary for summary in summaries if summary.skip_kind == 'overridden']
    sections: tuple[tuple[str, list[RuleSummary]], ...] = (
        ('gaps:', [s for s in summaries if s.status == 'gap' and s.skip_kind != 'overridden']),
        ('overridden (gaps: the subclass replaced, skipped or deleted these rules):', overridden),
        ('failures:', [s for s in summaries if s.status == 'failed']),
        ('missing:', [s for s in summaries if s.status == 'missing']),
    )
    for title, listed in sections:
        if listed:
            writer.write_line(title)
        for summary in listed:
            detail = (summary.detail or '').splitlines()
            writer.write_line(f'  [{summary.area}/{summary.rule_id}] ({summary.level}) {detail[0] if detail else ""}')
    counts = {name: sum(1 for summary in summaries if summary.status == name) for name in STATUSES}
    overrides = f' ({len(overridden)} overridden)' if overridden else ''
    writer.write_line(
        f'verdict: {suite.verdict} ({counts["passed"]} passed, {counts["failed"]} failed, {counts["gap"]} gaps'
        f'{overrides}, {counts["not-applicable"]} not applicable, {counts["missing"]} missing; '
        f'{len(summaries)} rules on {", ".join(suite.anyio_backends)})',
        bold=True,
        green=suite.verdict == 'certified',
        yellow=suite.verdict == 'partial',
        red=suite.verdict == 'not certified',
    )


def _write_loop_tie_hint(writer: TerminalWriter, suite: SuiteReport) -> None:
    """Once per suite: when rules failed because the backend is tied to another loop, how to run it there only."""
    tied = [result for result in suite.results if result.outcome == 'failed' and result.loop_tie is not None]
    if not tied:
        return
    tie = tied[0].loop_tie
    rules = len({result.rule_id for result in tied if result.loop_tie == tie})
    loops = ', '.join(sorted({result.anyio_backend for result in tied if result.loop_tie == tie}))
    writer.write_line(
        f'hint: {rules} rule(s) failed on {loops} because the backend called {tie}-only code: make it loop-neutral '
        f'with anyio, or run it on {tie} only (certify chooses so when not given --anyio-backend); under pytest:',
        yellow=True,
    )
    writer.write_line('    @pytest.fixture')
    writer.write_line(f"    def anyio_backend(): return '{tie}'")
