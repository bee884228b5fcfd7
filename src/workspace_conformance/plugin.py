"""The pytest11 entry point: the suite's runtime, its collection hooks and options, and the reports plugin.

The reports plugin registers as `workspace-conformance-reports`, so `-p no:workspace-conformance-reports` runs the
suite without it: rules, hang guards, classified skips, overridden rules and `pytest -rs` stay the same.
"""

from __future__ import annotations

import argparse
from collections.abc import Generator

import pytest

from ._frames import machinery_hidden
from .engine import _collection as collection_hooks
from .engine import session as session_hooks
from .engine import waivers as waiver_hooks
from .engine._concurrency import DEFAULT_CONCURRENCY, REMOTE_ROUND_TRIP
from .engine._rule import rule_of
from .engine._support import rebuild_for_rule
from .options import FAIL_UNDER_INI, concurrency, fail_under, fail_under_of, max_duration, time_scale
from .reports import plugin as reports_plugin
from .runtime.interrupts import SignalsStopTheRun
from .vocabulary import PROFILES

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('REPORTS_NAME', 'pytest_addoption', 'pytest_configure')

REPORTS_NAME = 'workspace-conformance-reports'
_RUNTIME = (
    (session_hooks, 'workspace-conformance-session'),
    (collection_hooks, 'workspace-conformance-collection'),
    (waiver_hooks, 'workspace-conformance-waivers'),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The `--conformance-*` options; a bad value is a usage error before anything runs."""
    group = parser.getgroup('workspace-conformance')
    group.addoption(
        '--conformance-time-scale',
        dest='conformance_time_scale',
        type=time_scale,
        default=None,
        help='multiply every hang guard and wait of the conformance rules (a finite number > 0, e.g. 3 for a slow '
        'provider)',
    )
    group.addoption(
        '--conformance-report',
        dest='conformance_report',
        metavar='DIR',
        default=None,
        help='write the conformance report there: report.json, report.md, report.html, junit.xml, badge.svg, '
        'badge.json (also when the run is interrupted, marked incomplete)',
    )
    group.addoption(
        '--conformance-profile',
        dest='conformance_profile',
        choices=list(PROFILES),
        default=None,
        help='Hypothesis profile of the generated cases: ci (fast, repeatable; the default), certify (thorough, '
        'repeatable), dev (random, remembers failures)',
    )
    group.addoption(
        '--conformance-concurrency',
        dest='conformance_concurrency',
        metavar='N',
        type=concurrency,
        default='auto',
        help=f'rules checked at once against one shared environment: auto (the default: up to {DEFAULT_CONCURRENCY} '
        f'when a backend call takes {REMOTE_ROUND_TRIP * 1000:g} ms or more, as over a network; else one at a time), '
        'or N (1: one at a time); rules marked alone, and every rule of a function-scoped backend, run by themselves',
    )
    group.addoption(
        '--conformance-max-duration',
        dest='conformance_max_duration',
        metavar='SECONDS',
        type=max_duration,
        default=None,
        help='end the session after this many seconds of wall time: the report is marked incomplete and the rules '
        'not yet checked are missing',
    )
    group.addoption(
        '--conformance-rebuild-per-call',
        dest='conformance_rebuild_per_call',
        action='store_true',
        default=False,
        help='durable rebuild mode: every backend operation of a rule goes to a backend freshly built from the ref '
        'by the `attach_backend` fixture (rules skip as fixture-missing without it); finds backends that keep '
        'state in the Python object',
    )
    gate_help = (
        'exit 1 when the conformance verdict is worse: certified or partial (order: not certified < partial < '
        'certified); off by default; a run interrupted keeps its own exit status'
    )
    group.addoption(
        '--conformance-fail-under',
        dest='conformance_fail_under',
        metavar='VERDICT',
        type=fail_under,
        default=None,
        help=f'{gate_help}; overrides the ini option {FAIL_UNDER_INI}',
    )
    group.addoption(
        waiver_hooks.OPTION,
        dest='conformance_expected_failures',
        metavar='FILE',
        type=waiver_hooks.waiver_file,
        default=None,
        help='a YAML mapping of rule id to reason: each rule runs as a strict expected failure (as the '
        '`expected_failures` fixture); an entry naming no rule of the session is a usage error, and one whose rule '
        'passes fails the run with a line to remove it',
    )
    parser.addini(FAIL_UNDER_INI, help=f'{gate_help}; --conformance-fail-under overrides it', default='')


def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's runtime, then the reports plugin unless it is blocked (`-p no:...`)."""
    config.addinivalue_line('markers', 'conformance_rule(id, area, level): a workspace conformance rule')
    _configure_gate(config)
    config.pluginmanager.register(
        SignalsStopTheRun(lambda function: rule_of(function) is not None), 'workspace-conformance-signals'
    )
    for hooks, name in _RUNTIME:
        if not config.pluginmanager.is_registered(hooks):
            config.pluginmanager.register(hooks, name)
    if not config.pluginmanager.is_blocked(REPORTS_NAME) and not config.pluginmanager.is_registered(reports_plugin):
        config.pluginmanager.register(reports_plugin, REPORTS_NAME)


def _configure_gate(config: pytest.Config) -> None:
    """Keep the session's verdict gate for the reports plugin; a bad ini value or no reports plugin is a usage error."""
    try:
        gate = fail_under_of(config.getoption('conformance_fail_under', None), str(config.getini(FAIL_UNDER_INI)))
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(str(error)) from None
    if gate is None:
        return
    if config.pluginmanager.is_blocked(REPORTS_NAME):
        raise pytest.UsageError(
            f'{gate.setting} needs the reports plugin, which computes the verdict: drop -p no:{REPORTS_NAME}'
        )
    config.stash[reports_plugin.FAIL_UNDER] = gate


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """In rebuild-per-call mode, hand each backend rule its backend rebuilt from the ref for every operation."""
    rebuild_for_rule(pyfuncitem)
    return (yield)
