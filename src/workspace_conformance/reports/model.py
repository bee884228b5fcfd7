"""The data of a conformance run as pydantic models, and the verdict computed from it."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .. import vocabulary
from ..vocabulary import NO_ISOLATION_CLAIMED, NOT_APPLICABLE_KINDS, Outcome, RuleStatus, Strength, Verdict

__all__ = (
    'SCHEMA_VERSION',
    'IsolationClaims',
    'Outcome',
    'Report',
    'RuleOutcome',
    'RuleStatus',
    'RuleSummary',
    'SkipKind',
    'SuiteReport',
    'Verdict',
    'Waiver',
    'advisories',
    'broken_causes',
    'isolation_of',
    'isolation_verdict',
    'meets',
    'overall_verdict',
    'summarize',
    'verdict_of',
)

SkipKind = Literal[vocabulary.SkipKind, 'unclassified']
"""The suite's skip kinds (`vocabulary.SkipKind`), and `unclassified` for a skip no rule classified."""


class _OfARule(BaseModel):
    """The fields every record of one rule starts with: which rule, its area, its level and its strength."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    area: str
    level: str
    strength: Strength = 'must'
    """How much the rule's clause binds (`vocabulary.Strength`); reports of schema 1, which predate it, bind always."""


class RuleOutcome(_OfARule):
    """What one rule did on one anyio backend."""

    clause: str
    anyio_backend: str
    outcome: Outcome
    skip_kind: SkipKind | None = None
    reason: str | None = None
    duration: float = 0.0
    """Seconds: its setup and teardown, and the rule's own time (in a batch, not its item's wall time)."""
    excerpt: str | None = None
    """The failure as the rule reported it: its rule, clause and what was observed (or pytest's crash line)."""
    observed: str | None = None
    """Of a failure the suite framed, only what was observed: the excerpt without the rule and clause before it."""
    frames: list[str] = []
    """Where a failure happened in the backend's own code, as `file:line in function`, innermost last (a few)."""
    calls: int | None = None
    """Backend operations the rule made (None: it made none through the suite's tracing, e.g. it skipped first)."""
    round_trips: int | None = None
    """Of those, the ones that started with no other of the rule's calls in flight: its serial round trips."""
    loop_tie: str | None = None
    """For a failure: the other event loop its error shows the backend's code is tied to (asyncio-only code that
    failed on trio: `asyncio`), else None."""
    raised_by: str | None = None
    """For a failure: the backend operation (`write_bytes`) whose error ended the rule, else None (what it saw was
    wrong, or its own code failed)."""
    grounds: list[str] = []
    """The backend operations the rule is the first check of (`Rule.grounds`): when it fails on one of them, the
    other rules that ended on an error of that operation are `broken` by it."""


class RuleSummary(_OfARule):
    """One rule's status over every anyio backend it ran on, the unit the verdict counts."""

    status: RuleStatus
    detail: str | None = None
    """Why it is not a pass: the skip kind and reason, the failure excerpt, or what is missing."""
    skip_kind: SkipKind | None = None
    """The kind of skip behind a gap or a not-applicable rule (`overridden` for a rule the subclass overrode)."""
    broken_by: str | None = None
    """Of a `broken` rule: the rule that failed for its cause, which grounds the operation it ended on."""


_SEVERITY: dict[RuleStatus, int] = {
    'passed': 0,
    'not-applicable': 1,
    'gap': 2,
    'advisory': 3,
    'broken': 4,
    'missing': 5,
    'failed': 6,
}


def _status(outcome: RuleOutcome) -> tuple[RuleStatus, str | None]:
    where = f'on {outcome.anyio_backend}'
    if outcome.outcome == 'passed':
        return 'passed', None
    if outcome.outcome == 'missing':
        return 'missing', f'no result {where}'
    if outcome.outcome == 'advisory':
        seen = outcome.observed or outcome.excerpt or ''
        return 'advisory', f'advisory {where} ({outcome.reason or outcome.strength}): {seen}'.rstrip(': ')
    if outcome.outcome in ('failed', 'error', 'xpassed'):
        return 'failed', f'{outcome.outcome} {where}: {outcome.excerpt or outcome.reason or ""}'.rstrip(': ')
    if outcome.outcome == 'xfailed':
        return 'gap', f'expected failure {where}: {outcome.reason or ""}'
    if outcome.skip_kind in NOT_APPLICABLE_KINDS:
        return 'not-applicable', outcome.reason
    return 'gap', f'{outcome.skip_kind or "unclassified"}: {outcome.reason or ""}'


def _failed_on(outcome: RuleOutcome, *, advising: bool = False) -> bool:
    """Whether `outcome` is a failure (or, `advising`, an advisory) that ended on an error of a backend operation."""
    kinds = ('failed', 'error', 'advisory') if advising else ('failed', 'error')
    return outcome.outcome in kinds and outcome.raised_by is not None


def broken_causes(outcomes: Iterable[RuleOutcome]) -> dict[tuple[str, str], str]:
    """(rule id, event loop) -> the rule that failed for its cause, for each failure that is only an echo of another.

    A failure is an echo when it ended on an error of a backend operation, and the rule that grounds that operation
    failed on an error of the same operation on the same event loop. A grounding rule that is itself an echo (it ended
    on an operation another rule grounds) passes its cause on, so each echo points at the first cause.
    """
    outcomes = list(outcomes)
    grounding: dict[tuple[str, str], RuleOutcome] = {}  # (operation, loop) -> the rule that grounds it
    for outcome in outcomes:
        for operation in outcome.grounds:
            grounding.setdefault((operation, outcome.anyio_backend), outcome)

    def cause(outcome: RuleOutcome, seen: frozenset[str]) -> str | None:
        if not _failed_on(outcome, advising=True):
            return None
        ground = grounding.get((str(outcome.raised_by), outcome.anyio_backend))
        if ground is None or ground.rule_id in seen or not _failed_on(ground):  # `seen` holds `outcome`'s own id
            return None
        if ground.raised_by != outcome.raised_by:  # the grounding rule ended on another operation: its cause, if any
            return cause(ground, seen | {ground.rule_id})
        return ground.rule_id

    found = {}
    for outcome in outcomes:
        root = cause(outcome, frozenset({outcome.rule_id}))
        if root is not None:
            found[(outcome.rule_id, outcome.anyio_backend)] = root
    return found


def summarize(outcomes: Iterable[RuleOutcome]) -> list[RuleSummary]:
    """One summary per rule: the worst of its outcomes over the anyio backends (a failure anywhere fails it).

    A failure that only echoes another rule's (`broken_causes`) is `broken`, pointing at that rule.
    """
    outcomes = list(outcomes)
    echoes = broken_causes(outcomes)
    worst: dict[str, tuple[RuleOutcome, RuleStatus, str | None, str | None]] = {}
    for outcome in outcomes:
        status, detail = _status(outcome)
        cause = echoes.get((outcome.rule_id, outcome.anyio_backend))
        if cause is not None:
            status = 'broken'
            detail = (
                f'broken by {cause} on {outcome.anyio_backend}: backend.{outcome.raised_by} raised here too, and '
                f'{cause} failed on it first; fix that and run again ({outcome.observed or outcome.excerpt or ""})'
            ).removesuffix(' ()')
        seen = worst.get(outcome.rule_id)
        if seen is None or _SEVERITY[status] > _SEVERITY[seen[1]]:
            worst[outcome.rule_id] = (outcome, status, detail, cause)
    return [
        RuleSummary(
            rule_id=rule_id,
            area=outcome.area,
            level=outcome.level,
            strength=outcome.strength,
            status=status,
            detail=detail,
            skip_kind=outcome.skip_kind if status in ('gap', 'not-applicable') else None,
            broken_by=cause if status == 'broken' else None,
        )
        for rule_id, (outcome, status, detail, cause) in worst.items()
    ]


def verdict_of(summaries: Iterable[RuleSummary]) -> Verdict:
    """Certified when every applicable binding rule passed; partial when its gaps are extended or overridden; else not.

    Only `must` rules (and claims the subject made, whose failures stay failures) decide: an advisory, or a gap of a
    rule that only advises, is listed beside the verdict and never changes it. A rule with no result is `missing`
    whatever its strength: the run is incomplete. A core rule the subclass overrode was not checked by this suite, so it
    never certifies, but the subclass checked something in its place (or chose not to, visibly): `partial`.
    """
    summaries = list(summaries)
    if not summaries:
        return 'not certified'
    for summary in summaries:
        binding_gap = summary.status == 'gap' and summary.strength == 'must'
        core_gap = binding_gap and summary.level == 'core' and summary.skip_kind != 'overridden'
        if summary.status in ('failed', 'broken', 'missing') or core_gap:
            return 'not certified'
    if any(summary.status == 'gap' and summary.strength == 'must' for summary in summaries):
        return 'partial'
    return 'certified'


def advisories(summaries: Iterable[RuleSummary]) -> list[RuleSummary]:
    """The rules whose failure only advises the subject (`should`, or a claim it did not make): listed, never hidden."""
    return [summary for summary in summaries if summary.status == 'advisory']


SCHEMA_VERSION = 2
"""2: each rule's `strength`, and the `advisory` outcome and status; a report of schema 1 reads as all `must`."""


class Waiver(BaseModel):
    """A declared limit or an expected failure: the rule it covers and the backend author's reason."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    reason: str


class IsolationClaims(BaseModel):
    """What an isolation suite's backend claims to keep apart from the host, and which of its claims held."""

    model_config = ConfigDict(frozen=True)

    claimed: list[str]
    held: list[str]
    """Claims whose rules all passed or do not apply to the backend (one at least passed)."""
    failed: list[str]
    """Claims with a failed rule, or one the target expects to fail (a known finding, a strict expected failure)."""
    unchecked: list[str]
    """Claims neither held nor failed: a rule of theirs is a gap or has no result."""

    @property
    def summary(self) -> str:
        """One line: `no isolation claimed`, or the claims held, failed and unchecked."""
        if not self.claimed:
            return NO_ISOLATION_CLAIMED
        parts = [(name, claims) for name, claims in (('held', self.held), ('failed', self.failed)) if claims]
        parts += [('unchecked', self.unchecked)] if self.unchecked else []
        return '; '.join(f'{name}: {", ".join(claims)}' for name, claims in parts)


def isolation_verdict(claims: IsolationClaims, summaries: Iterable[RuleSummary]) -> Verdict:
    """An isolation suite's verdict: its rules' verdict when every claim held, else `not certified` (proved short)."""
    if not claims.claimed or claims.held != claims.claimed:
        return 'not certified'
    return verdict_of(summaries)


def isolation_of(
    claims: Iterable[str], summaries: Iterable[RuleSummary], expected: Collection[str] = ()
) -> IsolationClaims:
    """Which `claims` held (rules passed or not applicable, one passed), failed (or fail as `expected`), or not.

    `expected` holds the ids of the rules that failed as their target expects (outcome `xfailed`): a known finding.
    """
    claimed = sorted(claims)
    statuses: dict[str, set[str]] = {claim: set() for claim in claimed}
    for summary in summaries:
        if summary.area in statuses:
            statuses[summary.area].add('failed' if summary.rule_id in expected else summary.status)
    failed = [claim for claim in claimed if 'failed' in statuses[claim]]
    held = [
        claim for claim in claimed if 'passed' in statuses[claim] and statuses[claim] <= {'passed', 'not-applicable'}
    ]
    unchecked = [claim for claim in claimed if claim not in failed and claim not in held]
    return IsolationClaims(claimed=claimed, held=held, failed=failed, unchecked=unchecked)


class SuiteReport(BaseModel):
    """One suite class's run: the backend it checked, its waivers, every outcome, and its verdict."""

    subject: str
    backend_class: str | None = None
    ref_provider: str | None = None
    anyio_backends: list[str]
    loops_left_out: dict[str, str] = {}
    """Event loop -> why certify left it out (its preflight showed the backend is tied to another loop): neither a
    gap nor a failure; the verdict counts the loops in `anyio_backends`."""
    declared_limits: list[Waiver] = []
    expected_failures: list[Waiver] = []
    results: list[RuleOutcome]
    rules: list[RuleSummary]
    verdict: Verdict
    isolation: IsolationClaims | None = None
    """Of an isolation suite: its claims and which held. A suite that claims nothing is `not certified` (it proves
    nothing), and leaves the report's verdict to the other suites."""

    @property
    def suite_class(self) -> str:
        """The suite class's name without the target in brackets: `TestIsolation` for `m.py::TestIsolation[docker]`."""
        return self.subject.rpartition('::')[2].partition('[')[0]


class WaiverFileRecord(BaseModel):
    """The file of expected failures a run was given (`--expected-failures`): its name, hash and the rules it waives.

    A bundle holds the file itself as `expected-failures.yaml`; `verify` checks it against this hash.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    sha256: str
    rule_ids: list[str]


class Report(BaseModel):
    """A conformance run: what ran, where, with which tools, every rule's evidence, and the verdict."""

    schema_version: int = SCHEMA_VERSION
    toolkit_version: str
    pydantic_ai_version: str
    python: str
    platform: str
    hypothesis_profile: str
    command: list[str] = []
    started: str
    finished: str
    complete: bool
    """False when the run was interrupted or any rule has no result; such a report is never certified."""
    suites: list[SuiteReport]
    verdict: Verdict
    expected_failures_file: WaiverFileRecord | None = None
    """The file of expected failures the run was given, if any (each suite lists the waivers it applied)."""


_RANK: dict[Verdict, int] = {'certified': 0, 'partial': 1, 'not certified': 2}


def meets(verdict: Verdict, threshold: Verdict) -> bool:
    """Whether `verdict` is `threshold` or better (not certified < partial < certified)."""
    return _RANK[verdict] <= _RANK[threshold]


def overall_verdict(suites: Iterable[SuiteReport], *, complete: bool) -> Verdict:
    """The worst verdict of the suites; `not certified` when incomplete or empty."""
    verdicts = [suite.verdict for suite in suites if suite.isolation is None or suite.isolation.claimed]
    if not complete or not verdicts:
        return 'not certified'
    return max(verdicts, key=_RANK.__getitem__)
