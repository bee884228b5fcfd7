"""`WorkspaceIsolationSuite` as a stranger uses it: a subclass with `backend` and `isolation_claims`, nothing else."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from workspace_conformance.isolation import NO_CLAIMS, checked_claims, isolation_rules
from workspace_conformance.reports.model import RuleSummary, isolation_of
from workspace_conformance.suite import ConformanceConfigError

JAIL_MODULE = Path(__file__).resolve().parent / 'outsider_bwrap.py'
needs_bwrap = pytest.mark.skipif(shutil.which('bwrap') is None, reason='bubblewrap (bwrap) is not installed')
SUITE = """
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from outsider_bwrap import BwrapJail
from workspace_conformance import WorkspaceIsolationSuite


class TestSandbox(WorkspaceIsolationSuite):
    @pytest.fixture
    def anyio_backend(self):
        return 'asyncio'

    @pytest.fixture
    def backend(self, tmp_path):
        return {backend}(tmp_path)

    @pytest.fixture
    def isolation_claims(self):
        return {claims}
"""


def _leftovers() -> list[str]:
    """Canary files, sockets, marked processes, variables and listener threads this process's runs left behind.

    Only this process's: another xdist worker's rules may be planting theirs right now.
    """
    found = [str(path) for path in Path(tempfile.gettempdir()).glob(f'wcs-isolation-{os.getpid()}-*')]
    for entry in Path('/proc').iterdir():
        try:
            marked = b'wcs-isolation-process-' in (entry / 'cmdline').read_bytes()
            if entry.name.isdigit() and marked and (entry / 'stat').read_text().split()[3] == str(os.getpid()):
                found.append(f'process {entry.name}')
        except OSError:
            continue
    found += [name for name in os.environ if name.startswith('WCS_ISOLATION_')]
    found += [thread.name for thread in threading.enumerate() if thread.name.startswith('isolation listener')]
    return found


@pytest.fixture
def vendor(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project of the sandbox's author: their jail module, and nothing of ours but the installed package."""
    shutil.copy(JAIL_MODULE, pytester.path / 'outsider_bwrap.py')
    pytester.syspathinsert()
    return pytester


def _run(vendor: pytest.Pytester, backend: str, claims: str) -> pytest.RunResult:
    vendor.makepyfile(test_sandbox=SUITE.format(backend=backend, claims=claims))
    return vendor.runpytest_inprocess('-p', 'no:cacheprovider', '-p', 'no:randomly', '-rs')


def test_unknown_claims_are_a_usage_error_naming_the_allowed_ones() -> None:
    with pytest.raises(ConformanceConfigError, match=r"unknown claims \['disk'\]: the claims are files, processes, "):
        checked_claims({'files', 'disk'})
    with pytest.raises(ConformanceConfigError, match='not the string'):
        checked_claims('files')
    assert checked_claims(set()) == frozenset()


def test_a_subclass_with_an_unknown_claim_errors_on_every_rule(vendor: pytest.Pytester) -> None:
    result = _run(vendor, 'LocalWorkspaceBackend', "{'files', 'disk'}")
    result.assert_outcomes(errors=len(isolation_rules()))
    result.stdout.fnmatch_lines(["*names unknown claims [[]'disk'[]]: the claims are files, processes*"])


def test_claims_held_failed_and_unchecked_are_read_from_the_areas() -> None:
    def summary(area: str, status: str) -> RuleSummary:
        return RuleSummary(rule_id=f'{area}-{status}', area=area, level='core', status=status)  # type: ignore[arg-type]

    summaries = [summary('files', 'passed'), summary('network', 'failed'), summary('processes', 'gap')]
    claims = isolation_of(['files', 'network', 'processes'], summaries)
    assert (claims.held, claims.failed, claims.unchecked) == (['files'], ['network'], ['processes'])
    assert claims.summary == 'held: files; failed: network; unchecked: processes'
    assert isolation_of([], summaries).summary == NO_CLAIMS
    # A rule that failed as its target expects (outcome xfailed, a known finding) fails its claim.
    assert isolation_of(['processes'], summaries, expected={'processes-gap'}).failed == ['processes']


@pytest.mark.slow
def test_local_claiming_nothing_is_not_applicable_and_says_no_isolation_claimed(vendor: pytest.Pytester) -> None:
    result = _run(vendor, 'LocalWorkspaceBackend', 'set()')
    result.assert_outcomes(skipped=len(isolation_rules()))
    result.stdout.fnmatch_lines(['isolation: no isolation claimed', 'verdict: not certified*'])
    result.stdout.fnmatch_lines(['*not-applicable: no isolation claimed*'])
    assert _leftovers() == []


@needs_bwrap
@pytest.mark.slow
def test_an_outsiders_bwrap_jail_holds_every_claim_it_makes(vendor: pytest.Pytester) -> None:
    result = _run(vendor, 'BwrapJail', "{'files', 'processes', 'environment', 'network'}")
    result.assert_outcomes(passed=len(isolation_rules()))
    result.stdout.fnmatch_lines(['isolation: held: environment, files, network, processes', 'verdict: certified*'])
    assert _leftovers() == []


@needs_bwrap
@pytest.mark.slow
def test_a_claim_the_jail_does_not_make_is_not_applicable(vendor: pytest.Pytester) -> None:
    result = _run(vendor, 'BwrapJail', "{'network'}")
    result.assert_outcomes(passed=2, skipped=len(isolation_rules()) - 2)
    result.stdout.fnmatch_lines(['isolation: held: network'])
    result.stdout.fnmatch_lines(["*does not claim 'files' isolation*"])


@pytest.mark.slow
def test_local_pretending_fails_its_claims_and_leaves_nothing_on_the_host(vendor: pytest.Pytester) -> None:
    result = _run(vendor, 'LocalWorkspaceBackend', "{'files', 'processes', 'environment', 'network'}")
    result.assert_outcomes(passed=1, failed=len(isolation_rules()) - 1)
    result.stdout.fnmatch_lines(['isolation: held: environment; failed: files, network, processes'])
    assert _leftovers() == []


@pytest.mark.slow
def test_a_temp_dir_too_long_for_a_socket_address_still_gets_a_reachable_unix_socket(
    vendor: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket path no client could name would pass every sandbox: the listener goes to /tmp, and local reaches it."""
    long = vendor.path / ('deep-' * 20)
    long.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(long))
    vendor.makepyfile(test_sandbox=SUITE.format(backend='LocalWorkspaceBackend', claims="{'network'}"))
    result = vendor.runpytest_inprocess('-p', 'no:cacheprovider', '-p', 'no:randomly', '-k', 'unix_socket')
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*the host listener /tmp/wcs-isolation-* saw * connection(s) from the sandbox*'])
    assert _leftovers() == [] and not list(Path('/tmp').glob(f'wcs-isolation-{os.getpid()}-*'))
