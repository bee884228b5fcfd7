"""The terminal summary: the same `Report` every other format renders, as counts per area, listings and verdicts.

A failing rule is one block, whatever the number of event loops it failed on: its id, the loops, the failure with
its clause, and the backend's own frames. Rules with no result are a count, listed in the report.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any, Protocol

from ..model import Report, RuleOutcome, RuleSummary, SuiteReport
from ._counts import STATUSES

__all__ = ('EVIDENCE_LINES', 'TerminalWriter', 'failure_block', 'write_summary')

EVIDENCE_LINES = 6
"""Lines of a failure's message a block shows (Hypothesis's notes can be many); the report keeps them all."""
_FAILING = ('failed', 'error', 'xpassed')
_RANDOM_NAME = re.compile(r'\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{6,}\b')
"""A hex token with letters and digits: the random part of a name the rule made (a scratch directory per loop)."""


class TerminalWriter(Protocol):
    """What the summary needs of pytest's terminal reporter."""

    def write_sep(self, sep: str, title: str | None = ..., **markup: bool) -> Any: ...

    def write_line(self, line: str, **markup: bool) -> Any: ...


def write_summary(
    writer: TerminalWriter, report: Report, *, hidden: frozenset[str] = frozenset(), report_file: Path | None = None
) -> None:
    """Each suite of `report` (but those in `hidden`): counts per area and level, every gap, override, failure.

    Rules with no result are counted, and `report_file` (the report written, if any) is named as where they are listed.
    """
    for suite in report.suites:
        if suite.subject not in hidden:
            _write_suite(writer, suite, report_file)
            _write_loop_tie_hint(writer, suite)


def failure_block(summary: RuleSummary, outcomes: list[RuleOutcome]) -> list[str]:
    """The lines of one failing rule: its id and the loops it failed on, then each distinct failure once.

    A failure identical on several event loops (same message, same frames) is shown once for all of them, as the
    first loop says it: the random names a rule makes for each run (its scratch directory) do not count.
    """
    shown = ('advisory',) if summary.status == 'advisory' else _FAILING  # an advisory's block: its advisories only
    failing = [outcome for outcome in outcomes if outcome.outcome in shown]
    if not failing:
        detail = (summary.detail or '').splitlines()
        return [f'  [{summary.area}/{summary.rule_id}] ({summary.level}) {detail[0] if detail else ""}'.rstrip()]
    kinds = {outcome.outcome for outcome in failing}
    verb = kinds.pop() if len(kinds) == 1 else 'failed'
    loops = ', '.join(sorted({outcome.anyio_backend for outcome in failing}))
    # An advisory says how much its rule binds and why it only advises: `(core, should) advisory on ... (why)`.
    advisory = verb == 'advisory'
    strength = f', {summary.strength}' if advisory else ''
    why = f' ({failing[0].reason or summary.strength})' if advisory else ''
    lines = [f'  [{summary.area}/{summary.rule_id}] ({summary.level}{strength}) {verb} on {loops}{why}']
    groups: dict[tuple[str, tuple[str, ...]], tuple[RuleOutcome, list[str]]] = {}
    for outcome in failing:
        key = (_RANDOM_NAME.sub('...', _evidence(outcome)), tuple(outcome.frames))
        groups.setdefault(key, (outcome, []))[1].append(outcome.anyio_backend)
    for first, on in groups.values():
        evidence, frames = _evidence(first), first.frames
        indent = '    '
        if len(groups) > 1:
            lines.append(f'    on {", ".join(sorted(on))}:')
            indent = '      '
        lines.extend(f'{indent}{line}' for line in _clipped_lines(evidence, summary))
        lines.extend(f'{indent}{frame}' for frame in frames)
    return lines


def _evidence(outcome: RuleOutcome) -> str:
    """What a failing outcome says: the rule's failure message, else pytest's, else the reason it carries."""
    if outcome.outcome == 'xpassed':
        return f'passed, but is declared an expected failure: {outcome.reason or ""}'.rstrip(': ')
    return outcome.excerpt or outcome.reason or outcome.outcome


def _clipped_lines(evidence: str, summary: RuleSummary) -> list[str]:
    """The evidence's lines, without the `[area/rule] ` the block's first line shows, at most `EVIDENCE_LINES`."""
    lines = evidence.splitlines() or ['']
    lines[0] = lines[0].removeprefix(f'[{summary.area}/{summary.rule_id}] ')
    if len(lines) > EVIDENCE_LINES:
        cut = len(lines) - EVIDENCE_LINES + 1
        lines = [*lines[: EVIDENCE_LINES - 1], f'... ({cut} more lines in the report)']
    return lines


def _write_suite(writer: TerminalWriter, suite: SuiteReport, report_file: Path | None) -> None:
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
    )
    for title, listed in sections:
        if listed:
            writer.write_line(title)
        for summary in listed:
            detail = (summary.detail or '').splitlines()
            writer.write_line(f'  [{summary.area}/{summary.rule_id}] ({summary.level}) {detail[0] if detail else ""}')
    for title, status in (
        ('failures:', 'failed'),
        ('advisories (rules that do not bind here; never a failure):', 'advisory'),
    ):
        listed = [summary for summary in summaries if summary.status == status]
        if listed:
            writer.write_line(title)
        for summary in listed:
            for line in failure_block(
                summary, [outcome for outcome in suite.results if outcome.rule_id == summary.rule_id]
            ):
                writer.write_line(line)
    areas = {summary.rule_id: summary.area for summary in summaries}
    _write_broken(writer, [summary for summary in summaries if summary.status == 'broken'], areas)
    counts = {name: sum(1 for summary in summaries if summary.status == name) for name in STATUSES}
    if counts['missing']:
        where = f'; the report lists them: {report_file}' if report_file is not None else ''
        writer.write_line(
            f'missing: {counts["missing"]} rules have no result (the run stopped early, or -k left them out){where}'
        )
    if suite.isolation is not None:
        writer.write_line(f'isolation: {suite.isolation.summary}', bold=True, red=bool(suite.isolation.failed))
    overrides = f' ({len(overridden)} overridden)' if overridden else ''
    writer.write_line(
        f'verdict: {suite.verdict} ({counts["passed"]} passed, {counts["failed"]} failed, {counts["broken"]} broken, '
        f'{counts["advisory"]} advisories, {counts["gap"]} gaps'
        f'{overrides}, {counts["not-applicable"]} not applicable, {counts["missing"]} missing; '
        f'{len(summaries)} rules on {", ".join(suite.anyio_backends)})',
        bold=True,
        green=suite.verdict == 'certified',
        yellow=suite.verdict == 'partial',
        red=suite.verdict == 'not certified',
    )


BROKEN_WIDTH = 110
"""Characters of a line listing broken rules: the ids wrap, one cause's list takes a few lines however long."""


def _write_broken(writer: TerminalWriter, broken: list[RuleSummary], areas: dict[str, str]) -> None:
    """The broken rules, one list per failure they echo: the rule that failed first, then the ids it broke."""
    causes: dict[str, list[str]] = {}
    for summary in broken:
        causes.setdefault(summary.broken_by or '?', []).append(f'{summary.area}/{summary.rule_id}')
    for cause, rules in causes.items():
        writer.write_line(
            f'broken by [{areas.get(cause, "?")}/{cause}]: {len(rules)} rules ended on the error it failed on, so '
            'they checked nothing; fix it and run again:'
        )
        listed = ' '.join(f'{rule},' for rule in rules)
        for line in textwrap.wrap(
            listed,
            BROKEN_WIDTH,
            initial_indent='  ',
            subsequent_indent='  ',
            break_on_hyphens=False,
            break_long_words=False,
        ):
            writer.write_line(line.rstrip(','))


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
