"""README's first command installs only the declared dependencies, and `certify` runs on them.

A fresh `pip install -e .` once broke `certify` at import (`No module named 'httpx'`): pydantic-ai-slim 2.68 moved to
httpx2, and the capability suite imported httpx, which only the `[dev]` extra's engines brought along. These tests
build README's light install in a fresh virtual environment (uv, from its cache) and run the command line from it, so
a module that only the dev install has fails here, not on a vendor's first run.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 40
"""Packages README's first command may install (issue 24: at most 40; it was 27 when the limit was set)."""
LIST_DISTRIBUTIONS = 'import importlib.metadata as m; print(*sorted({d.metadata["Name"] for d in m.distributions()}))'


def _key(name: str) -> str:
    return name.lower().replace('_', '-')


def _closure(name: str) -> set[str]:
    """Distributions a plain install of `name` brings: its requirements without extras, recursively."""
    environment = {key: str(value) for key, value in default_environment().items()} | {'extra': ''}
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if _key(current) in seen:
            continue
        seen.add(_key(current))
        try:
            requires = importlib.metadata.requires(current) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate(environment):
                todo.append(requirement.name)
    return seen


@pytest.fixture(scope='module')
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding README's light install (`pip install -e .`), built with uv."""
    uv = shutil.which('uv') or str(Path(sys.executable).with_name('uv'))
    if not Path(uv).exists():
        pytest.skip('uv builds the light environment: install the dev extra')
    venv = tmp_path_factory.mktemp('light') / 'venv'
    for command in (
        [uv, 'venv', '-q', '--python', sys.executable, str(venv)],
        [uv, 'pip', 'install', '-q', '--python', str(venv / 'bin' / 'python'), '-e', str(ROOT)],
    ):
        made = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if made.returncode != 0:
            pytest.fail(f'{" ".join(command[:3])} failed: {made.stderr[-2000:]}')
    return venv


def test_the_closure_is_the_light_install() -> None:
    """The declared closure holds what `certify` runs on, and none of the dev extra's engines or tools."""
    light = _closure('workspace-conformance')
    assert {'pytest', 'anyio', 'hypothesis', 'pydantic-ai-slim', 'jinja2'} <= light
    assert not {'prefect', 'dbos', 'temporalio', 'trio', 'pytest-xdist', 'nox'} & light, sorted(light)


@pytest.mark.slow
def test_the_light_install_is_small_and_only_the_closure(light: Path) -> None:
    """README's first command installs at most LIMIT packages, each one in the declared closure."""
    listed = subprocess.run(
        [str(light / 'bin' / 'python'), '-c', LIST_DISTRIBUTIONS],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    names = {_key(name) for name in listed} - {'pip', 'setuptools'}
    assert len(names) <= LIMIT, sorted(names)
    assert names <= _closure('workspace-conformance'), sorted(names - _closure('workspace-conformance'))


@pytest.mark.slow
def test_certify_runs_on_the_light_install(light: Path, tmp_path: Path) -> None:
    """`certify --capability`, narrowed to a few rules of both suites, runs and decides on the light install."""
    command = [
        str(light / 'bin' / 'workspace-conformance'),
        'certify',
        '--capability',
        '-k',
        'write_then_read or stderr_alone or get_workspace',
        '--report',
        str(tmp_path / 'r'),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    output = result.stdout + result.stderr
    assert 'Traceback' not in output and 'internal error' not in output, output[-3000:]
    assert result.returncode in (0, 1), output[-3000:]
    assert output.splitlines()[-1].startswith('workspace-conformance: '), output[-3000:]
    assert (tmp_path / 'r' / 'report.json').is_file()


@pytest.mark.slow
def test_rules_names_both_suites_on_the_light_install(light: Path, tmp_path: Path) -> None:
    """The catalog, the capability suite included, prints on the light install."""
    command = [str(light / 'bin' / 'workspace-conformance'), 'rules']
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert 'capability' in result.stdout.lower()
