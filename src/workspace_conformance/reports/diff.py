"""Compare two reports: what changed around the rules (event loops, catalog, versions), then rule by rule.

Outcomes are compared on the event loops both runs ran. A rule that failed on trio only, in a run that no longer
runs trio, is not fixed: it was not checked. A rule that fails on a loop only the new run ran is a regression.

An advisory (a failed rule that does not bind the subject) ranks with a pass for the verdict: a rule that becomes one
(or stops being one) is a change, listed apart; one that goes from advisory to failed is a regression.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Report, RuleSummary, SuiteReport, summarize

__all__ = ('ReportDiff', 'diff_reports')

_RANK = {'passed': 0, 'not-applicable': 0, 'advisory': 0, 'gap': 1, 'missing': 2, 'broken': 2, 'failed': 2}
_EVIDENCE_CHARS = 200
_FAILED = ('failed', 'error', 'xpassed')


@dataclass
class ReportDiff:
    """What changed between two runs; a regression is any rule whose status got worse on a loop the new run ran."""

    context: list[str] = field(default_factory=list)
    """What changed around the rules, one line each: event loops, catalog, toolkit and pydantic-ai versions."""
    regressions: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    new_rules: list[str] = field(default_factory=list)
    removed_rules: list[str] = field(default_factory=list)
    changed_gaps: list[str] = field(default_factory=list)
    advisories: list[str] = field(default_factory=list)
    """Rules that became an advisory or stopped being one (`passed -> advisory`): a change, never a regression."""

    def lines(self) -> list[str]:
        """Each rule that changed, one line, labelled: regressions first, then fixes, advisories, new, removed, gaps."""
        sections = (
            ('regression', self.regressions),
            ('fixed', self.fixes),
            ('advisory', self.advisories),
            ('new rule', self.new_rules),
            ('removed rule', self.removed_rules),
            ('gap changed', self.changed_gaps),
        )
        return [f'{label}: {entry}' for label, entries in sections for entry in entries]


@dataclass(frozen=True)
class _Summaries:
    """A suite's rule summaries over a set of its loops, each set summarized once however many rules ask for it."""

    suite: SuiteReport
    by_loops: dict[frozenset[str], dict[str, RuleSummary]] = field(default_factory=dict)

    def on(self, loops: set[str]) -> dict[str, RuleSummary]:
        """Every rule's summary over `loops` only, by rule id."""
        key = frozenset(loops)
        if key not in self.by_loops:
            # The whole suite on those loops, not a rule alone: whether a failure is broken depends on other rules'.
            outcomes = [r for r in self.suite.results if r.anyio_backend in loops]
            self.by_loops[key] = {summary.rule_id: summary for summary in summarize(outcomes)}
        return self.by_loops[key]


@dataclass(frozen=True)
class _Entry:
    """One rule of a report: its summary over every loop, and its suite's summaries (its outcomes and loops)."""

    summary: RuleSummary
    summaries: _Summaries

    @property
    def suite(self) -> SuiteReport:
        """The suite the rule ran in."""
        return self.summaries.suite

    def on(self, loops: set[str]) -> RuleSummary | None:
        """The rule's summary over `loops` only (None when it has no outcome on any of them)."""
        return self.summaries.on(loops).get(self.summary.rule_id)

    def observed(self, loops: set[str], outcomes: tuple[str, ...] = _FAILED) -> str:
        """What the rule observed where it had `outcomes` (a failure) on `loops`: one line, no rule or clause ('')."""
        failing = [
            r
            for r in self.suite.results
            if r.rule_id == self.summary.rule_id and r.anyio_backend in loops and r.outcome in outcomes
        ]
        return _first_line(failing[0].observed or failing[0].excerpt or failing[0].reason or '') if failing else ''


def _first_line(text: str) -> str:
    first = text.strip().split('\n', 1)[0]
    return first if len(first) <= _EVIDENCE_CHARS else first[: _EVIDENCE_CHARS - 1].rsplit(' ', 1)[0] + ' …'


def _rules(report: Report) -> dict[str, _Entry]:
    # One suite per certification run; with several, rules are told apart by suite.
    prefix = len(report.suites) > 1
    entries: dict[str, _Entry] = {}
    for suite in report.suites:
        summaries = _Summaries(suite)
        for rule in suite.rules:
            entries[(f'{suite.subject}::' if prefix else '') + f'{rule.area}/{rule.rule_id}'] = _Entry(rule, summaries)
    return entries


def _loops(loops: set[str]) -> str:
    return ', '.join(sorted(loops)) or 'none'


def _context(old: Report, new: Report, before: dict[str, _Entry], after: dict[str, _Entry]) -> list[str]:
    """The lines naming what changed around the rules: each suite's event loops, the catalog, the versions."""
    lines = []
    named = len(old.suites) > 1 or len(new.suites) > 1
    pairs = (
        [(a, b) for a in old.suites for b in new.suites if a.subject == b.subject]
        if named
        else list(zip(old.suites, new.suites, strict=False))
    )
    for was, now in pairs:
        if set(was.anyio_backends) != set(now.anyio_backends):
            where = f' of {now.subject}' if named else ''
            line = f'event loops{where}: {_loops(set(was.anyio_backends))} -> {_loops(set(now.anyio_backends))}'
            unchecked = _failed_only_on_dropped(was, now, before)
            dropped = set(was.anyio_backends) - set(now.anyio_backends)
            if unchecked:
                rules = f'{unchecked} rule{"s" if unchecked > 1 else ""}'
                line += f' ({rules} failed only on {_loops(dropped)}, which the new run did not run: not fixed)'
            lines.append(line)
    if before.keys() != after.keys():
        added, removed = len(after.keys() - before.keys()), len(before.keys() - after.keys())
        lines.append(f'catalog: {len(before)} rules -> {len(after)} rules (+{added}, -{removed})')
    for label, was_version, now_version in (
        ('toolkit', old.toolkit_version, new.toolkit_version),
        ('pydantic-ai', old.pydantic_ai_version, new.pydantic_ai_version),
        ('hypothesis profile', old.hypothesis_profile, new.hypothesis_profile),
    ):
        if was_version != now_version:
            lines.append(f'{label}: {was_version} -> {now_version}')
    return lines


def _failed_only_on_dropped(was: SuiteReport, now: SuiteReport, before: dict[str, _Entry]) -> int:
    """How many of `was`'s rules failed on loops `now` did not run, and on none of the loops both ran."""
    dropped, common = (
        set(was.anyio_backends) - set(now.anyio_backends),
        set(was.anyio_backends) & set(now.anyio_backends),
    )
    count = 0
    for entry in before.values():
        if entry.suite is not was or not dropped:
            continue
        there, here = entry.on(dropped), entry.on(common)
        if there is not None and _RANK[there.status] == 2 and (here is None or _RANK[here.status] < 2):
            count += 1
    return count


def diff_reports(old: Report, new: Report) -> ReportDiff:
    """The difference from `old` to `new`: what changed around the rules, and each rule compared on common loops."""
    before, after = _rules(old), _rules(new)
    result = ReportDiff(context=_context(old, new, before, after))
    for key in sorted(after.keys() - before.keys()):
        result.new_rules.append(f'{key} ({after[key].summary.status})')
    for key in sorted(before.keys() - after.keys()):
        result.removed_rules.append(f'{key} (was {before[key].summary.status})')
    for key in sorted(before.keys() & after.keys()):
        _compare(key, before[key], after[key], result)
    return result


def _compare(key: str, old: _Entry, new: _Entry, result: ReportDiff) -> None:
    """Add `key`'s change, if any, to `result`: its status on the loops both runs ran, then on loops only new ran."""
    old_loops, new_loops = set(old.suite.anyio_backends), set(new.suite.anyio_backends)
    common = old_loops & new_loops
    now: RuleSummary | None
    if old_loops == new_loops:  # the same loops: the rules' recorded statuses
        was, now = old.summary, new.summary
    elif common:
        was, now = old.on(common) or old.summary, new.on(common) or new.summary
    else:  # no loop in common: nothing to compare, but a failure on the new loops is still one
        was, now = old.summary, None
    if now is not None and _RANK[now.status] > _RANK[was.status]:
        why = new.observed(common) or (now.detail or '').split('\n', 1)[0]
        result.regressions.append(f'{key}: {was.status} -> {now.status}: {why}'.rstrip(': '))
        return
    added = new_loops - old_loops
    extra = new.on(added) if added else None
    if extra is not None and _RANK[extra.status] > _RANK[was.status]:
        why = new.observed(added) or (extra.detail or '').split('\n', 1)[0]
        where = f'on {_loops(added)}, which the old run did not run'
        result.regressions.append(f'{key}: {was.status} -> {extra.status} {where}: {why}'.rstrip(': '))
    elif now is None:
        return
    elif now.status != was.status and 'advisory' in (now.status, was.status) and _RANK[was.status] < 2:
        why = new.observed(common, ('advisory',)) if now.status == 'advisory' else ''
        result.advisories.append(f'{key}: {was.status} -> {now.status}: {why}'.rstrip(': '))
    elif _RANK[now.status] < _RANK[was.status]:
        result.fixes.append(f'{key}: {was.status} -> {now.status}')
    elif now.status == 'gap' and now.detail != was.detail:
        result.changed_gaps.append(f'{key}: {was.detail} -> {now.detail}')
