"""Every example in docs/doubles.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = (Path(__file__).resolve().parent.parent / 'docs' / 'doubles.md').read_text()
EXAMPLES = re.findall(r'```python\n(.*?)```', DOC, re.DOTALL)
SCRIPTS = [example for example in EXAMPLES if 'anyio.run(main)' in example]
SUITES = [example for example in EXAMPLES if 'WorkspaceBackendSuite' in example]


def test_the_guide_has_its_examples() -> None:
    assert len(SCRIPTS) == 3 and len(SUITES) == 1


@pytest.mark.parametrize('example', SCRIPTS, ids=['scripted', 'faulty', 'provider'])
def test_script_example_runs(example: str) -> None:
    exec(compile(example, 'docs/doubles.md', 'exec'), {'__name__': 'docs_example'})


@pytest.mark.slow  # a whole-suite run
def test_suite_example_certifies_without_failures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example=SUITES[0])
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider')
    outcomes = result.parseoutcomes()
    assert outcomes.get('failed', 0) == 0 and outcomes['passed'] >= 40, result.stdout.str()[-2000:]
