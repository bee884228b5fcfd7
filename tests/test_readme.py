"""README: short, its backend-author example works when pasted, its commands are the ones CI and vendors run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from workspace_conformance import rules

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / 'README.md').read_text()


@pytest.mark.slow
def test_the_pasted_example_runs_every_rule_without_failure(pytester: pytest.Pytester) -> None:
    """The README's example, pasted, runs every rule on asyncio without a failure and ends `partial`.

    On asyncio alone: the example's backend is LocalWorkspaceBackend, which test_self_certification certifies on trio.
    """
    pytester.makepyfile(test_my_backend=_python_blocks()[0])
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-rs', '-k', 'asyncio')
    outcomes = result.parseoutcomes()
    assert outcomes.get('failed', 0) == 0 and outcomes.get('errors', 0) == 0, result.stdout.str()[-3000:]
    # Everything but the fresh_backend rules (LocalWorkspaceBackend has its ref from construction) and, as root,
    # the permission rule: README says it ends `partial`.
    assert outcomes['passed'] >= 38
    assert 'verdict: partial (' in result.stdout.str()


def _python_blocks() -> list[str]:
    return re.findall(r'```python\n(.*?)```', README, re.DOTALL)


def _sh_commands() -> list[str]:
    return re.findall(r'```sh\n(.*?)\n```', README, re.DOTALL)


def test_the_readme_is_at_most_150_lines() -> None:
    assert len(README.splitlines()) <= 150


def test_the_first_command_installs_only_what_certify_needs_and_certifies() -> None:
    install_and_certify = _sh_commands()[0]
    assert install_and_certify == (
        'python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/workspace-conformance certify'
    )
    # The extras certify does not need stay out of the base dependencies; `[dev]` is documented for contributors.
    pyproject = (ROOT / 'pyproject.toml').read_text()
    base = pyproject.split('dependencies = [', 1)[1].split(']', 1)[0]
    assert not any(extra in base for extra in ('trio', 'xdist', 'nox', 'ruff', 'mypy', 'dbos', 'harness'))
    assert 'Contributors install `[dev]`' in README


def test_ci_runs_the_readme_test_command() -> None:
    test_command = _sh_commands()[1]
    assert test_command == "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/nox"
    ci = (ROOT / '.ci' / 'run').read_text()
    assert '.venv/bin/nox' in ci and ".venv/bin/pip install -q -e '.[dev]'" in ci


def test_the_ci_entry_point_and_the_service_scripts_parse_as_bash() -> None:
    """A quoting slip in .ci/run (an apostrophe inside `${VAR:-...}`) made CI fail in 2 s before installing anything."""
    scripts = [
        ROOT / '.ci' / 'run',
        *sorted((ROOT / 'ci' / 'services').glob('*.sh')),
        *sorted(ROOT.glob('scripts/*.sh')),
    ]
    for script in scripts:
        checked = subprocess.run(['bash', '-n', str(script)], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, f'{script}: {checked.stderr}'


def test_the_asyncio_only_advice_runs_the_rules_on_asyncio_alone(pytester: pytest.Pytester) -> None:
    example, advice = _python_blocks()[:2]
    assert 'def anyio_backend' in advice and "return 'asyncio'" in advice
    pytester.makepyfile(test_my_backend=example.rstrip() + '\n\n' + advice)
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-v', '-k', 'stdin_is_at_eof')
    result.assert_outcomes(passed=1, warnings=0)
    assert f'{len(rules())} rules on asyncio)' in result.stdout.str()


def test_the_readme_names_both_suites_and_what_the_quickstart_prints_as_root() -> None:
    assert 'WorkspaceCapabilitySuite' in README and '](docs/capabilities.md)' in README
    assert '**As pasted it ends `partial`**' in README and '`runner` gap' in README
    assert 'an existing scratch directory of its own' in README


def test_the_github_template_is_called_by_a_path_that_exists_once_copied() -> None:
    """`uses:` names the copy the docs tell you to make of ci/github/certify.yml, never an unpublished repository."""
    ci_doc = (ROOT / 'docs' / 'ci.md').read_text()
    caller = (ROOT / 'ci' / 'github' / 'example-caller.yml').read_text()
    assert (ROOT / 'ci' / 'github' / 'certify.yml').exists()
    for text in (ci_doc, caller, README):
        for uses in re.findall(r'uses: (\S+)', text):
            assert not uses.startswith('OWNER/'), f'{uses} names a repository that publishes no workflow'
            if uses.startswith('actions/'):
                continue
            copy = uses.removeprefix('./')
            assert copy.startswith('.github/workflows/'), uses
            assert f'copy it into your repository as `{copy}`' in ci_doc, uses
            assert f'as `{copy}`' in caller, uses


def test_every_link_of_the_docs_stays_in_the_repo_and_the_design_is_linked() -> None:
    pages = [ROOT / 'README.md', ROOT / 'CONTRIBUTING.md', *sorted((ROOT / 'docs').glob('*.md'))]
    for page in pages:
        for target in re.findall(r'\]\(([^)#]+)\)', page.read_text()):
            if target.startswith(('http://', 'https://')):
                continue
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), f'{page.name} links {target}, not in the repo'
    assert '](docs/architecture.md)' in README and '](CONTRIBUTING.md)' in README
