"""Under `--conformance-concurrency auto`, the first rule's own calls decide: on a backend whose calls are round
trips the rules after it join it at once; on a local one every rule runs by itself."""

from __future__ import annotations

import itertools
import json

import pytest

from .test_waivers_and_guards import HEADER

pytestmark = pytest.mark.slow

MODULE = (
    HEADER
    + '''
import json
import os
import time

from workspace_conformance.doubles import FaultyBackend
from workspace_conformance.engine._guard import current_run


class Witness(FaultyBackend):
    """Writes, for each call, the rule making it and when it started and ended."""

    async def _intercept(self, name, args, kwargs, call):
        started = time.monotonic()
        try:
            return await super()._intercept(name, args, kwargs, call)
        finally:
            with open(os.environ['WITNESS'], 'a') as log:
                log.write(json.dumps([current_run().rule.qualified, started, time.monotonic()]) + '\\n')


TestWitnessed = suite_over(lambda directory: Witness(LocalWorkspaceBackend(directory), latency={'*': LATENCY}))
'''
)

RULES = 'generated_names_round_trip or large_listing_is_complete or stat_and_list_dir or test_exists'
LEADER = 'properties/generated_names_round_trip'


def _calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, latency: float, *options: str
) -> list[tuple[str, float, float]]:
    witness = pytester.path / 'witness.jsonl'
    monkeypatch.setenv('WITNESS', str(witness))
    pytester.makepyfile(test_witnessed=MODULE.replace('LATENCY', repr(latency)))
    result = pytester.runpytest_inprocess('-p', 'no:randomly', '-p', 'no:cacheprovider', '-k', RULES, *options)
    outcomes = result.parseoutcomes()
    assert outcomes.get('passed', 0) >= 4 and not outcomes.get('failed'), outcomes
    return [tuple(json.loads(line)) for line in witness.read_text().splitlines()]


def _overlapping_the_leader(calls: list[tuple[str, float, float]]) -> list[str]:
    """The other rules with a call that started before the leader's last call ended."""
    leader_end = max(end for rule, _, end in calls if rule == LEADER)
    return sorted({rule for rule, start, _ in calls if rule != LEADER and start < leader_end})


def test_on_a_remote_backend_the_rules_join_the_first_once_its_calls_are_measured(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _calls(pytester, monkeypatch, 0.05)
    assert calls[0][0] == LEADER
    assert len(_overlapping_the_leader(calls)) >= 2, calls[:12]


def test_on_a_local_backend_every_rule_runs_by_itself(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _calls(pytester, monkeypatch, 0.0)
    spans: dict[str, tuple[float, float]] = {}
    for rule, start, end in calls:
        first, last = spans.get(rule, (start, end))
        spans[rule] = (min(first, start), max(last, end))
    ordered = sorted(spans.values())
    assert len(ordered) >= 4, spans
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(ordered)), spans


def test_in_a_batch_the_rule_with_the_longest_guard_starts_first(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one slot beside the leader, the rule declared to take longest (`timeout=120`) goes before the others
    collected ahead of it, so a batch does not end waiting for a long rule that queued behind short ones."""
    calls = _calls(pytester, monkeypatch, 0.05, '--conformance-concurrency', '2')
    firsts: dict[str, float] = {}
    for rule, start, _ in calls:
        firsts.setdefault(rule, start)
    others = sorted((start, rule) for rule, start in firsts.items() if rule != LEADER)
    assert others[0][1] == 'files/large_listing_is_complete', others
