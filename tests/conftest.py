"""The project's own tests: pytester, and the three tiers every test belongs to (`fast`, `slow`, `system`).

- `system`: certifies real services (`tests/real_targets`); `nox -s targets` runs it on what `ci/services` starts;
- `slow`: runs the whole suite in pytester sessions, the mutant gate, the hostile gallery, the parity corpus, the
  browser, and every rule of a suite class a test module defines (a whole suite run, whatever its file); a test
  elsewhere opts in with `@pytest.mark.slow`;
- `fast`: everything else, the inner loop (`nox -s fast`, under 3 minutes on 2 cores).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workspace_conformance.capability import WorkspaceCapabilitySuite
from workspace_conformance.isolation import WorkspaceIsolationSuite
from workspace_conformance.runtime import emergency
from workspace_conformance.suite import WorkspaceBackendSuite
from workspace_conformance.tools import WorkspaceToolSuite

pytest_plugins = ['pytester', 'tests.xdist_groups']

TESTS = Path(__file__).resolve().parent
SYSTEM = ('real_targets/',)
SLOW = (
    'mutants/',
    'hostile/',
    'parity/',
    'test_cli_fuzz.py',
    'test_doubles_certification.py',
    'test_html_in_browser.py',
    'test_path_audit.py',
    'test_self_certification.py',
    'test_stateful_budget.py',
    'test_unprivileged.py',
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier, from its file or its own `slow` mark."""
    for item in items:
        try:
            where = Path(item.path).resolve().relative_to(TESTS).as_posix()
        except ValueError:  # a pytester run's own test module
            continue
        if where.startswith(SYSTEM):
            item.add_marker(pytest.mark.system)
        elif where.startswith(SLOW) or item.get_closest_marker('slow') is not None or _a_suite_rule(item):
            item.add_marker(pytest.mark.slow)
        else:
            item.add_marker(pytest.mark.fast)


def _a_suite_rule(item: pytest.Item) -> bool:
    """Whether the item is a rule of a suite class: one of a whole suite's runs, slow by what it does."""
    cls = getattr(item, 'cls', None)
    return cls is not None and issubclass(
        cls, (WorkspaceBackendSuite, WorkspaceCapabilitySuite, WorkspaceToolSuite, WorkspaceIsolationSuite)
    )


@pytest.fixture(autouse=True)
def _emergency_exit_restored(request: pytest.FixtureRequest) -> Iterator[None]:
    """An in-process pytester session leaves no emergency cleanup or exit status behind it.

    Its hangs need no restoring: they live in its own config (`engine._tracing.Hangs`).
    """
    if 'pytester' not in request.fixturenames:
        yield
        return
    with emergency.isolated():
        yield
