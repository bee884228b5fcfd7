"""`certify TARGET --isolation` runs the isolation suite beside the backend suite, with the target's stated claims."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workspace_conformance.isolation import NO_CLAIMS, isolation_rules
from workspace_conformance.targets import NAMED_TARGETS, TargetError
from workspace_conformance.targets.claims import (
    BUBBLEWRAP_CLAIMS,
    DOCKER_CLAIMS,
    E2B_LOCAL_CLAIMS,
    E2B_LOCAL_UNCONFINED,
    GVISOR_CLAIMS,
    IN_PROCESS_DOUBLE,
    LOCAL_CLAIMS,
    PODMAN_CLAIMS,
    SSH_CLAIMS,
)
from workspace_conformance.targets.isolation import claims_option
from workspace_conformance.vocabulary import ISOLATION_AREAS

ISOLATION_RULES = {rule.id for rule in isolation_rules()}
SOME_RULES = 'has_the_required_members or host_temp_file_is_unreadable or host_loopback_listener_is_unreachable'
"""One backend rule and one isolation rule of two claims: a certification narrowed to seconds."""


def _certify(tmp_path: Path, *arguments: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    command = [sys.executable, '-m', 'workspace_conformance', 'certify', *arguments]
    command += ['--anyio-backend', 'asyncio', '--report', str(tmp_path / 'report')]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    report = tmp_path / 'report' / 'report.json'
    return done, json.loads(report.read_text()) if report.exists() else None


def _suite(report: dict[str, Any], name: str) -> dict[str, Any]:
    """The report's suite whose subject ends with `name` (`TestIsolation[local]`)."""
    return next(suite for suite in report['suites'] if suite['subject'].endswith(f'::{name}'))


def test_claims_option_reads_own_none_and_listed_claims() -> None:
    assert claims_option('target') is None
    assert claims_option('none') == frozenset()
    assert claims_option('files, network') == frozenset({'files', 'network'})
    with pytest.raises(TargetError, match=r'^--isolation names unknown claims disk: give none, or a comma-separated'):
        claims_option('files,disk')
    with pytest.raises(TargetError, match='names no claim'):
        claims_option(',')


@pytest.mark.parametrize(
    'stated',
    [
        LOCAL_CLAIMS,
        IN_PROCESS_DOUBLE,
        SSH_CLAIMS,
        DOCKER_CLAIMS,
        GVISOR_CLAIMS,
        PODMAN_CLAIMS,
        BUBBLEWRAP_CLAIMS,
        E2B_LOCAL_CLAIMS,
        E2B_LOCAL_UNCONFINED,
    ],
)
def test_every_stated_claim_is_known_and_cites_its_source(stated: Any) -> None:
    assert stated.claims <= set(ISOLATION_AREAS)
    cited = ('https://', 'docs/', 'docstring', 'README', 'sshd(8)')
    assert any(citation in stated.source for citation in cited), stated.source


@pytest.mark.parametrize('name', ['local', 'local-shell', 'memory', 'provider'])
def test_in_process_targets_claim_nothing_and_say_why(name: str) -> None:
    target = NAMED_TARGETS[name].build({}, 'check')
    assert target.isolation_claims == frozenset()
    assert target.isolation_source in (LOCAL_CLAIMS.source, IN_PROCESS_DOUBLE.source)


@pytest.mark.skipif(importlib.util.find_spec('pydantic_ai_harness') is None, reason='pydantic-ai-harness not installed')
@pytest.mark.parametrize(
    ('name', 'options', 'stated'),
    [
        ('docker', {'image': 'busybox'}, DOCKER_CLAIMS),
        ('docker', {'image': 'busybox', 'runtime': 'runsc'}, GVISOR_CLAIMS),
        ('podman', {'image': 'busybox'}, PODMAN_CLAIMS),
        ('bubblewrap', {}, BUBBLEWRAP_CLAIMS),
    ],
)
def test_sandbox_targets_state_their_providers_claims(name: str, options: dict[str, str], stated: Any) -> None:
    target = NAMED_TARGETS[name].build(NAMED_TARGETS[name].values(options), 'check')
    assert (target.isolation_claims, target.isolation_source) == (stated.claims, stated.source)


@pytest.mark.parametrize(
    ('arguments', 'said'),
    [
        (['local', '--isolation', 'disk'], '--isolation names unknown claims disk'),
        (['--isolation', 'bubblewrap'], "--isolation took 'bubblewrap' as its CLAIMS: put TARGET first"),
        (['--isolation', '--tools', 'harness-filesystem'], "--isolation checks a TARGET's sandbox: name one"),
    ],
)
def test_a_bad_isolation_option_is_a_one_line_usage_error(tmp_path: Path, arguments: list[str], said: str) -> None:
    done, report = _certify(tmp_path, *arguments)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count('\n') == 1 and said in done.stderr, done.stderr
    assert report is None


@pytest.mark.slow  # a certify session
def test_local_claims_nothing_beside_its_backend_verdict(tmp_path: Path) -> None:
    done, report = _certify(tmp_path, 'local', '--isolation', '-k', SOME_RULES)
    assert report is not None, done.stdout + done.stderr
    isolation = _suite(report, 'TestIsolation[local]')
    assert isolation['isolation'] == {'claimed': [], 'held': [], 'failed': [], 'unchecked': []}
    ran = {rule['rule_id']: rule['status'] for rule in isolation['rules'] if rule['status'] != 'missing'}
    assert ran == {
        'host_temp_file_is_unreadable': 'not-applicable',
        'host_loopback_listener_is_unreachable': 'not-applicable',
    }
    backend = _suite(report, 'TestCertification[local]')
    assert [rule['rule_id'] for rule in backend['rules'] if rule['status'] == 'passed'] == ['has_the_required_members']
    assert f'isolation: {NO_CLAIMS}' in done.stdout
    assert 'local claims no isolation: ' in done.stderr and 'isolates nothing' in done.stderr
    assert f'(local; isolation: {NO_CLAIMS})' in done.stdout.splitlines()[-1]
    assert done.returncode == 1  # narrowed by -k: not certified


@pytest.mark.slow  # a certify session
def test_claims_given_on_the_command_line_are_checked_and_fail_on_local(tmp_path: Path) -> None:
    done, report = _certify(tmp_path, 'local', '--isolation', 'files,network', '-k', SOME_RULES)
    assert report is not None, done.stdout + done.stderr
    isolation = _suite(report, 'TestIsolation[local]')
    assert isolation['isolation']['failed'] == ['files', 'network']
    assert isolation['verdict'] == 'not certified'
    assert 'isolation: failed: files, network' in done.stdout
    assert done.returncode == 1


@pytest.mark.slow  # a certify session
def test_a_target_without_commands_has_every_isolation_rule_not_applicable(tmp_path: Path) -> None:
    done, report = _certify(tmp_path, 'memory', '--isolation', 'files,processes,environment,network')
    assert report is not None, done.stdout + done.stderr
    isolation = _suite(report, 'TestIsolation[memory]')
    assert {rule['rule_id'] for rule in isolation['rules']} == ISOLATION_RULES
    assert {rule['status'] for rule in isolation['rules']} == {'not-applicable'}
    assert report['complete']


@pytest.mark.slow  # a certify session
def test_k_selecting_only_isolation_rules_is_never_certified(tmp_path: Path) -> None:
    done, report = _certify(
        tmp_path, 'local', '--isolation', 'environment', '-k', 'runner_variable_never_reaches_commands'
    )
    assert report is not None, done.stdout + done.stderr
    assert _suite(report, 'TestIsolation[local]')['isolation']['held'] == ['environment']
    last = done.stdout.splitlines()[-1]
    assert last.startswith('workspace-conformance: not certified (local; isolation: held: environment; -k left out ')
    assert last.endswith('every rule of TestCertification)')
    assert done.returncode == 1
