"""Turn what the recorder saw into a `Report`: outcomes filled with `missing`, verdicts, metadata, redacted."""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from .._version import __version__
from ..suite import pydantic_ai_version
from .model import (
    Report,
    RuleOutcome,
    SuiteReport,
    Waiver,
    WaiverFileRecord,
    isolation_of,
    isolation_verdict,
    overall_verdict,
    summarize,
    verdict_of,
)
from .recording import SubjectResults
from .redact import Redactor

__all__ = ('assemble', 'now')


def now() -> str:
    """The current time, ISO 8601 in UTC."""
    return datetime.now(UTC).isoformat(timespec='seconds')


def _redacted(outcome: RuleOutcome, redact: Redactor) -> RuleOutcome:
    return outcome.model_copy(
        update={
            'reason': None if outcome.reason is None else redact(outcome.reason),
            'excerpt': None if outcome.excerpt is None else redact(outcome.excerpt),
            'observed': None if outcome.observed is None else redact(outcome.observed),
            'frames': [redact(frame) for frame in outcome.frames],
        }
    )


def assemble(
    subjects: Iterable[SubjectResults],
    *,
    started: str,
    profile: str,
    interrupted: bool,
    command: Sequence[str] = (),
    redact: Redactor | None = None,
    waivers_file: WaiverFileRecord | None = None,
) -> Report:
    """The report of a run; `complete` only when nothing interrupted it and every rule has a result."""
    redact = redact or Redactor()
    suites: list[SuiteReport] = []
    complete = not interrupted
    for subject in subjects:
        outcomes = [_redacted(outcome, redact) for outcome in subject.complete_outcomes()]
        complete = complete and all(outcome.outcome != 'missing' for outcome in outcomes)
        summaries = summarize(outcomes)
        claims = subject.isolation_claims
        expected = {outcome.rule_id for outcome in outcomes if outcome.outcome == 'xfailed'}
        isolation = None if claims is None else isolation_of(claims, summaries, expected)
        verdict = verdict_of(summaries) if isolation is None else isolation_verdict(isolation, summaries)
        suites.append(
            SuiteReport(
                subject=subject.subject,
                backend_class=subject.backend_class,
                ref_provider=subject.ref_provider,
                anyio_backends=subject.anyio_backends,
                loops_left_out={loop: redact(why) for loop, why in subject.loops_left_out.items()},
                declared_limits=[Waiver(rule_id=k, reason=redact(v)) for k, v in subject.declared_limits.items()],
                expected_failures=[Waiver(rule_id=k, reason=redact(v)) for k, v in subject.expected_failures.items()],
                results=sorted(outcomes, key=lambda outcome: (outcome.area, outcome.rule_id, outcome.anyio_backend)),
                rules=summaries,
                verdict=verdict,
                isolation=isolation,
            )
        )
    return Report(
        toolkit_version=__version__,
        pydantic_ai_version=pydantic_ai_version(),
        python=sys.version.split()[0],
        platform=platform.platform(),
        hypothesis_profile=profile,
        command=[redact(part) for part in command],
        started=started,
        finished=now(),
        complete=complete,
        suites=suites,
        verdict=overall_verdict(suites, complete=complete),
        expected_failures_file=waivers_file,
    )
