"""In the mutant gate a skipped rule proves nothing, so a skip there is turned into a failure."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    mutant = getattr(getattr(item, 'cls', None), 'mutant_name', None)
    if mutant and report.skipped and not hasattr(report, 'wasxfail'):
        report.outcome = 'failed'
        report.longrepr = f'the rule skipped against mutant {mutant!r}, so it proves nothing: {report.longrepr}'
    return report
