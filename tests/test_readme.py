"""The README's backend-author example works when pasted, and README names the command .ci/run runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / 'README.md').read_text()


@pytest.mark.slow
def test_the_pasted_example_runs_every_rule_without_failure(pytester: pytest.Pytester) -> None:
    example = re.search(r'```python\n(.*?)```', README, re.DOTALL)
    assert example is not None
    pytester.makepyfile(test_my_backend=example.group(1))
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-rs')
    outcomes = result.parseoutcomes()
    assert outcomes.get('failed', 0) == 0 and outcomes.get('errors', 0) == 0, result.stdout.str()[-3000:]
    # Everything but concurrent first use (no fresh_backend in the example) and, as root, the permission rule.
    assert outcomes['passed'] >= 2 * 38


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r'```sh\n(.*?)\n```', README, re.DOTALL)
    test_command = commands[1]
    assert test_command.endswith('.venv/bin/nox')
    ci = (ROOT / '.ci' / 'run').read_text()
    assert '.venv/bin/nox' in ci and ".venv/bin/pip install -q -e '.[dev]'" in ci


def test_every_link_of_the_docs_stays_in_the_repo_and_the_design_is_linked() -> None:
    pages = [ROOT / 'README.md', ROOT / 'CONTRIBUTING.md', *sorted((ROOT / 'docs').glob('*.md'))]
    for page in pages:
        for target in re.findall(r'\]\(([^)#]+)\)', page.read_text()):
            if target.startswith(('http://', 'https://')):
                continue
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), f'{page.name} links {target}, not in the repo'
    assert '](docs/architecture.md)' in README and '](CONTRIBUTING.md)' in README
