"""Named targets from the command line: the listing, options, not-run targets, and the in-process targets' verdicts."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from pydantic_ai.capabilities import LocalWorkspace

from workspace_conformance.engine._versions import pydantic_ai_at_least
from workspace_conformance.reports.verify import load_report
from workspace_conformance.targets import NAMED_TARGETS, TargetError
from workspace_conformance.targets._ledger import read_refs
from workspace_conformance.targets.base import CapabilitySetup, Target
from workspace_conformance.targets.certification import BuiltBackends, capability_target
from workspace_conformance.targets.local import LazyLocalBackend

from .runner import QUICK_CERTIFY


def _cli(cwd: Path, *args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    keys = ('E2B_API_KEY', 'DAYTONA_API_KEY', 'SPRITE_TOKEN')
    clean = {key: value for key, value in os.environ.items() if key not in keys}
    return subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', *args],
        cwd=cwd,
        env={**clean, **environment},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_targets_lists_every_named_target_with_its_status_here(tmp_path: Path) -> None:
    listed = _cli(tmp_path, 'targets', '--format', 'json')
    assert listed.returncode == 0, listed.stderr
    rows = {row['target']: row for row in json.loads(listed.stdout)}
    local = ['local', 'local-shell', 'memory', 'provider', 'docker', 'podman', 'ssh', 'bubblewrap', 'boxlite', 'smol']
    assert list(rows) == [*local, 'windows', 'memory-windows', 'e2b', 'modal', 'daytona', 'sprites', 'e2b-local']
    assert not rows['windows']['runnable'] and rows['windows']['missing']  # no Windows host here
    assert rows['memory-windows']['runnable'] == pydantic_ai_at_least((2, 78))
    # serve e2b needs no key: it runs wherever the harness, the e2b SDK and the serve extra are installed.
    assert rows['e2b-local']['runnable'] or 'is not installed' in rows['e2b-local']['missing']
    for name in ('local', 'local-shell', 'memory', 'provider'):
        assert rows[name]['runnable'] and rows[name]['missing'] is None
    assert rows['e2b'] == {**rows['e2b'], 'runnable': False, 'missing': 'no E2B_API_KEY'}
    assert rows['sprites'] == {**rows['sprites'], 'runnable': False, 'missing': 'no SPRITE_TOKEN'}
    for name in ('boxlite', 'smol'):
        assert rows[name]['runnable'] or rows[name]['missing'], f'{name} is neither ready nor says why not'
    assert rows['docker']['options'].keys() == {'image', 'user', 'working-dir', 'runtime'}
    table = _cli(tmp_path, 'targets').stdout
    assert re.search(r'^e2b +not run: no E2B_API_KEY$', table, re.MULTILINE), table
    assert '--image:' in table


def test_a_target_without_its_credentials_is_not_run_never_passed(tmp_path: Path) -> None:
    result = _cli(tmp_path, 'certify', 'e2b', '--report', str(tmp_path / 'out'))
    assert result.returncode == 3, result
    assert result.stdout.strip() == 'workspace-conformance: e2b: not run: no E2B_API_KEY'
    record = json.loads((tmp_path / 'out' / 'not-run.json').read_text())
    assert record == {'target': 'e2b', 'verdict': 'not run', 'reason': 'no E2B_API_KEY'}
    assert not (tmp_path / 'out' / 'report.json').exists()
    required = _cli(tmp_path, 'certify', 'e2b', '--require')
    assert required.returncode == 1, 'a required target that cannot run fails'


def test_an_option_the_target_does_not_take_is_a_one_line_error(tmp_path: Path) -> None:
    result = _cli(tmp_path, 'certify', 'local', '--image', 'busybox')
    assert result.returncode == 2
    assert result.stderr.strip() == ("workspace-conformance: target 'local' does not take --image; it takes no options")


def test_target_options_are_refused_for_a_factory_target() -> None:
    from workspace_conformance.targets import resolve_target

    with pytest.raises(TargetError, match='--image go with a named target'):
        resolve_target('my.module:factory', options={'image': 'x'})


def test_every_named_target_documents_its_options() -> None:
    for target in NAMED_TARGETS.values():
        assert target.description
        for option in target.options:
            assert option.help, f'{target.name} --{option.name} has no help'


@pytest.mark.slow
@pytest.mark.parametrize(('target', 'verdict'), [('local-shell', 'certified'), ('memory', 'partial')])
def test_an_in_process_target_gets_its_verdict(tmp_path: Path, target: str, verdict: str) -> None:
    """`certify` gives an in-process target its verdict and exit code and leaves nothing in TMPDIR.

    `provider` and `local` get theirs in test_concurrency's serial runs (the same command, one rule at a time).
    """
    result = _cli(
        tmp_path,
        'certify',
        target,
        *QUICK_CERTIFY,
        '--report',
        str(tmp_path / 'out'),
        TMPDIR=str(tmp_path),
    )
    report = load_report(tmp_path / 'out' / 'report.json')
    assert report.verdict == verdict, result.stdout[-3000:]
    assert result.returncode == (0 if verdict == 'certified' else 1)
    assert sorted(path.name for path in tmp_path.iterdir()) == ['out'], 'the run left files in TMPDIR'


@pytest.fixture
def boot_probe_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A host where the micro-VM SDKs import and /dev/kvm opens, with the services' state in `tmp_path`."""
    from workspace_conformance.targets import microvm

    kvm = tmp_path / 'kvm'
    kvm.write_bytes(b'')
    kvm.chmod(0o666)
    monkeypatch.setattr(microvm, 'missing_module', lambda module, install: None)
    monkeypatch.setattr(microvm, 'KVM', kvm)
    monkeypatch.setattr(microvm, '_sdk_version', lambda vm: f'{vm.distribution} 1.0')
    monkeypatch.setenv('WC_SERVICES', str(tmp_path / 'services'))
    microvm._missing.cache_clear()
    yield tmp_path / 'services'
    microvm._missing.cache_clear()


def _record(services: Path, name: str, **fields: object) -> None:
    from workspace_conformance.targets.microvm import BOOT_PROBE_FILE, _boot_id

    (services / name).mkdir(parents=True, exist_ok=True)
    record = {'target': name, 'boot_id': _boot_id(), 'sdk': f'{name} 1.0', **fields}
    (services / name / BOOT_PROBE_FILE).write_text(json.dumps(record))


def test_a_micro_vm_target_is_ready_only_where_its_boot_probe_booted_a_vm(boot_probe_host: Path) -> None:
    from workspace_conformance.targets.microvm import _missing

    boxlite = NAMED_TARGETS['boxlite']
    assert (boxlite.missing({}) or '').startswith('boot not probed here: run `bash ci/services/boxlite.sh up`')
    _missing.cache_clear()
    _record(boot_probe_host, 'boxlite', booted=False, reason='EngineError: timed out after 30s')
    assert boxlite.missing({}) == 'the micro-VM does not boot here: EngineError: timed out after 30s'
    _missing.cache_clear()
    _record(boot_probe_host, 'boxlite', booted=True, reason='', boot_id='an earlier boot')
    assert 'from another boot or SDK' in (boxlite.missing({}) or '')
    _missing.cache_clear()
    _record(boot_probe_host, 'boxlite', booted=True, reason='')
    assert boxlite.missing({}) is None


def test_as_root_smol_needs_its_uid_drop_off_where_dev_kvm_is_root_only(
    boot_probe_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_conformance.targets import microvm

    microvm.KVM.chmod(0o600)
    monkeypatch.setattr(os, 'geteuid', lambda: 0)
    monkeypatch.delenv('SMOLVM_VM_UID_DROP', raising=False)
    assert 'set SMOLVM_VM_UID_DROP=off' in (NAMED_TARGETS['smol'].missing({}) or '')
    microvm._missing.cache_clear()
    monkeypatch.setenv('SMOLVM_VM_UID_DROP', 'off')
    _record(boot_probe_host, 'smol', booted=True, reason='', sdk='smolmachines 1.0')
    assert NAMED_TARGETS['smol'].missing({}) is None


def test_the_matrix_labels_a_run_with_options_after_its_target() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'scripts'))
    try:
        from generate_targets_matrix import _label
    finally:
        sys.path.pop(0)
    assert _label('docker+runtime=runsc') == 'docker --runtime runsc'
    assert _label('podman') == 'podman'


def test_the_matrix_gives_a_run_that_left_rules_out_the_verdict_of_the_rules_it_ran(tmp_path: Path) -> None:
    # CI certifies gVisor and Podman without the bulk-data rules (tests/real_targets: their `missing` makes the
    # report's own verdict `not certified`); the row must say what ran and never count those rules as failed.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'scripts'))
    try:
        from generate_targets_matrix import SELECTION_FILE, render
    finally:
        sys.path.pop(0)
    run = tmp_path / 'local'
    run.mkdir()
    bundle = Path(__file__).resolve().parents[1] / 'submissions' / 'workspace-conformance' / 'local' / 'bundle'
    report = json.loads((bundle / 'report.json').read_text())
    suite = report['suites'][0]
    for summary in suite['rules']:
        if summary['rule_id'] == 'large_file_round_trip':
            summary.update(status='missing', detail='no result on asyncio')
    suite['verdict'] = report['verdict'] = 'not certified'
    (run / 'report.json').write_text(json.dumps(report))
    total = len(suite['rules'])
    row = next(line for line in render(tmp_path).splitlines() if line.startswith('| local |'))
    assert '**not certified**' in row and f'| {total - 1}/{total} |' not in row, row
    (run / SELECTION_FILE).write_text(json.dumps({'left_out': ['large_file_round_trip'], 'why': 'bulk data'}))
    matrix = render(tmp_path)
    row = next(line for line in matrix.splitlines() if line.startswith('| local |'))
    assert '**certified** on the rules run (1 bulk-data rules left to its bundle)' in row, row
    assert f'/{total - 1} | 0 | 0 |' in row, row
    assert 'Left out in CI, run in its bundle in submissions/: `large_file_round_trip`' in matrix


def test_built_backends_records_refs_and_lets_go_once_they_are_known(tmp_path: Path) -> None:
    built = BuiltBackends(tmp_path)
    factory = built.factory(lambda run_root: LazyLocalBackend(run_root / 'fresh'), tmp_path / 'asyncio')
    assert factory is not None
    created, unused = factory(), factory()
    anyio.run(created.working_dir)
    ref = created.ref
    gone = weakref.ref(created)
    del created
    built.settle()
    gc.collect()
    assert gone() is None, 'a backend whose ref is recorded is still held, so a rule cannot drop it'
    assert read_refs(tmp_path) == [ref]
    anyio.run(unused.working_dir)  # an environment made after the last settle is still recorded at the end
    built.finish()
    assert read_refs(tmp_path) == [ref, unused.ref]


def test_the_capability_suite_gets_the_capability_waivers_and_never_the_backend_ones(tmp_path: Path) -> None:
    # A backend rule id among the capability suite's declared limits made every capability rule a config error
    # (`certify podman --capability`, `certify e2b-local --capability`).
    setup = CapabilitySetup(capability=LocalWorkspace(tmp_path))
    target = Target(
        name='t',
        description='a target whose backend and capability each declare a limit',
        backend=lambda _: LazyLocalBackend(tmp_path),
        capability=lambda _: setup,
        declared_limits={'large_file_round_trip': 'a backend cap'},
        expected_failures={'symlink_loop_does_not_break_listing': 'a backend defect'},
        capability_declared_limits={'get_workspace_builds_without_io': 'a capability cap'},
        capability_expected_failures={'hostile_ref_ids_are_declined': 'a capability defect'},
    )
    assert target.capability is not None
    own = capability_target(target, target.capability)
    assert dict(own.declared_limits) == {'get_workspace_builds_without_io': 'a capability cap'}
    assert dict(own.expected_failures) == {'hostile_ref_ids_are_declined': 'a capability defect'}
    given = capability_target(target, lambda _: setup)  # a --capability factory: none of the target's waivers
    assert dict(given.declared_limits) == {} and dict(given.expected_failures) == {}
