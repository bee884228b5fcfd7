"""Expected failures in a file: a YAML mapping of rule id to reason, meaning what the `expected_failures` fixture does.

A vendor's CI shares one file across projects instead of repeating a fixture: `certify --expected-failures FILE`, or
`pytest --conformance-expected-failures FILE`. Each rule it names runs as a strict expected failure. An entry
naming no rule of the session is a usage error; an entry whose rule now passes fails the run, and the terminal
summary says, one line per entry, to remove it. The plugin (`workspace_conformance.plugin`) registers this module.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from ..vocabulary import OUTCOME_PROPERTY, user_property
from ._rules import catalog

__all__ = (
    'FILED_PROPERTY',
    'OPTION',
    'WAIVERS',
    'ExpectedFailuresFile',
    'WaiverFile',
    'pytest_configure',
    'unknown_ids',
    'waiver_file',
)

OPTION = '--conformance-expected-failures'
FILED_PROPERTY = 'workspace_conformance_filed_waiver'
"""The `user_properties` key on a rule the file waives: `{'rule_id', 'loop'}` (it survives xdist, unlike the item)."""


@dataclass(frozen=True)
class WaiverFile:
    """A file of expected failures: where it is, the SHA-256 of its bytes, and its entries (rule id -> reason)."""

    path: str
    sha256: str
    entries: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return Path(self.path).name


WAIVERS = pytest.StashKey[WaiverFile]()
"""On the config: the session's file of expected failures, when one was given."""


def waiver_file(text: str) -> WaiverFile:
    """The file at `text` read as a mapping of rule id to reason, or an argparse error saying what to fix."""
    path = Path(text).expanduser()
    try:
        data = path.read_bytes()
    except OSError as error:
        raise argparse.ArgumentTypeError(f'{text}: cannot read it ({error.strerror or error})') from None
    try:
        loaded = yaml.safe_load(data.decode('utf-8'))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        where = getattr(error, 'problem_mark', None)
        at = f' at line {where.line + 1}' if where is not None else ''
        raise argparse.ArgumentTypeError(
            f'{text}: not a YAML file{at}: write one `rule_id: reason` line per expected failure'
        ) from None
    loaded = {} if loaded is None else loaded
    if not isinstance(loaded, dict):
        raise argparse.ArgumentTypeError(
            f'{text}: holds a {type(loaded).__name__}, not a mapping: write one `rule_id: reason` line per entry'
        )
    for rule_id, reason in loaded.items():
        if not isinstance(rule_id, str) or not isinstance(reason, str) or not reason.strip():
            raise argparse.ArgumentTypeError(
                f'{text}: the entry {rule_id!r}: {reason!r} is not a rule id and a reason: write `rule_id: why`'
            )
    return WaiverFile(str(path.resolve()), hashlib.sha256(data).hexdigest(), dict(loaded))


def unknown_ids(kind: str, ids: Mapping[str, str] | set[str], known: set[str]) -> str | None:
    """One line naming the ids of `kind` that are no known rule's (with the closest known one), or None."""
    unknown = sorted(set(ids) - known)
    if not unknown:
        return None
    hints = []
    for rule_id in unknown:
        close = difflib.get_close_matches(rule_id.removeprefix('test_'), sorted(known), n=1)
        hints.append(f'{rule_id!r}' + (f' (did you mean {close[0]!r}?)' if close else ''))
    return (
        f'`{kind}` names unknown rule ids: {", ".join(hints)}. '
        'Use rule ids as `workspace-conformance rules` lists them (the test name without `test_`).'
    )


class ExpectedFailuresFile:
    """The session's file of expected failures at work: its ids checked at collection, its stale entries reported.

    Registered by `pytest_configure` only when the session was given a file.
    """

    def __init__(self, waivers: WaiverFile) -> None:
        self.waivers = waivers
        self.stale: dict[str, set[str]] = {}
        """Each entry whose rule passed, and the event loops it passed on."""
        self.inapplicable: dict[str, set[str]] = {}
        """Each entry whose rule does not apply to the backend, and the event loops it was found so on."""

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A usage error when the file names a rule that no suite class of the session has."""
        known: set[str] = set()
        for cls in {getattr(item, 'cls', None) for item in items}:
            if isinstance(cls, type):
                known |= {meta.id for meta in catalog(cls)}
        problem = unknown_ids(f'{OPTION} {self.waivers.path}', self.waivers.entries, known) if known else None
        if problem:
            raise pytest.UsageError(problem)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note an entry whose rule passed: a call that failed under the file's strict xfail is one that passed."""
        filed = user_property(report, FILED_PROPERTY)
        if report.when == 'call' and report.failed and isinstance(filed, dict):
            outcome = user_property(report, OUTCOME_PROPERTY)
            stale = isinstance(outcome, dict) and 'stale_waiver' in outcome
            found = self.inapplicable if stale else self.stale
            found.setdefault(str(filed['rule_id']), set()).add(str(filed['loop']))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """One line per entry of the file whose rule passed: remove it."""
        if not self.stale and not self.inapplicable:
            return
        terminalreporter.section('stale expected failures', red=True)
        for found, why in ((self.stale, 'it passes now'), (self.inapplicable, 'it does not apply to this backend')):
            for rule_id in sorted(found):
                loops = ', '.join(sorted(found[rule_id]))
                on = f' (on {loops})' if loops else ''
                terminalreporter.line(f'{self.waivers.path}: remove `{rule_id}`: {why}{on}', red=True)


def pytest_configure(config: pytest.Config) -> None:
    """Keep the file the session was given, and put it to work."""
    waivers = config.getoption('conformance_expected_failures', None)
    if isinstance(waivers, WaiverFile):
        config.stash[WAIVERS] = waivers
        config.pluginmanager.register(ExpectedFailuresFile(waivers), 'workspace-conformance-expected-failures')
