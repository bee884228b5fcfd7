"""The quickstart of docs/capabilities.md runs as pasted, with no failure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = (Path(__file__).resolve().parents[2] / 'docs' / 'capabilities.md').read_text()
SUITES = [
    example for example in re.findall(r'```python\n(.*?)```', DOC, re.DOTALL) if 'WorkspaceCapabilitySuite' in example
]


@pytest.mark.slow  # a whole-suite run
def test_the_quickstart_certifies_without_failures(pytester: pytest.Pytester) -> None:
    assert len(SUITES) == 1
    pytester.makepyfile(test_quickstart=SUITES[0])
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider')
    outcomes = result.parseoutcomes()
    assert outcomes.get('failed', 0) == 0 and outcomes['passed'] >= 18, result.stdout.str()[-2000:]
