"""The model-based rule's shrink budget: a failure is reported, with its program, before the hang guard could fire."""

from __future__ import annotations

import re

import pytest

from workspace_conformance.suite import stateful

from .test_waivers_and_guards import HEADER

SUBJECT = (
    HEADER
    + """
from pathlib import Path


class KeepsNonEmptyDirectories(LocalWorkspaceBackend):
    async def remove(self, path):
        target = Path(path)
        if target.is_dir() and any(target.iterdir()):
            for child in target.iterdir():
                if child.is_file():
                    child.unlink()
            return
        await super().remove(path)


class TestKeeps(Base):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return KeepsNonEmptyDirectories(tmp_path_factory.mktemp('ws'))
"""
)


@pytest.mark.parametrize(
    ('calls', 'seconds', 'stopped_by'),
    [(60, 600.0, 'calls'), (10**9, 0.5, 'time')],
    ids=['call-budget', 'time-budget'],
)
def test_a_failure_is_shrunk_within_the_budget_and_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, calls: int, seconds: float, stopped_by: str
) -> None:
    monkeypatch.setattr(stateful, 'SHRINK_CALLS', calls)
    monkeypatch.setattr(stateful, 'SHRINK_SECONDS', seconds)
    pytester.makepyfile(test_subject=SUBJECT)
    result = pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-k', 'reference_model', '--conformance-profile', 'certify'
    )
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    # The failure is a real disagreement with the model, replayed for real, with the program that shows it.
    assert re.search(r"observed: \w+\('[abc/]+'\) gave .*; the reference model gave", output), output
    assert 'state.teardown()' in output
    spent = re.search(r'shrinking stopped after ([\d,]+) backend calls and (\d+) s', output)
    assert spent, output
    if stopped_by == 'calls':
        # The budget is checked between programs, so the last one started may finish: at most 2 x 25 steps more.
        assert calls <= int(spent[1].replace(',', '')) <= calls + 60
    else:
        # Stopped by its clock, not by the 60 s default: the note is written after Hypothesis replays the shortest
        # program and the last program started finishes, which took 6 s on a loaded 2-core CI machine.
        assert int(spent[2]) <= 20
