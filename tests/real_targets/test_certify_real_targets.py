"""Certify the real backends on the services ci/services started, and prove each run leaves nothing behind.

Run by `nox -s targets` (pydantic-ai-harness 0.62 on pydantic-ai-slim 2.62), which starts the services,
exports their variables (DOCKER_HOST, WC_DOCKER_IMAGE, WC_PODMAN_IMAGE, WC_SSH_HOST, WC_SSH_CONFIG,
WC_BOXLITE_ROOTFS, ...) and stops them afterwards. Each certification's report goes to build/targets/<run>/,
where scripts/generate_targets_matrix.py reads it; a run of a target with options that set it apart (docker
on gVisor) is named `<target>+<option>=<value>`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workspace_conformance.reports.model import Report, SuiteReport, verdict_of
from workspace_conformance.reports.verify import load_report
from workspace_conformance.services.e2b.confinement import bwrap_path
from workspace_conformance.targets._engine import engine_for
from workspace_conformance.targets.claims import (
    BUBBLEWRAP_CLAIMS,
    DOCKER_CLAIMS,
    E2B_LOCAL_CLAIMS,
    E2B_LOCAL_UNCONFINED,
    GVISOR_CLAIMS,
    PODMAN_CLAIMS,
    SSH_CLAIMS,
    Claims,
)
from workspace_conformance.targets.docker import RUN_LABEL
from workspace_conformance.targets.listing import NOT_RUN_FILE
from workspace_conformance.targets.microvm import boot_record_path
from workspace_conformance.targets.ssh import REMOTE_ROOT

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / 'build' / 'targets'
CERTIFY_TIMEOUT = 25 * 60
"""A whole certification of one target; the slowest, podman, took 13 minutes in CI (17 on a loaded machine)."""
SLOW_PROVIDER = ['-n', '2', '--conformance-profile', 'ci', '--conformance-time-scale', '3']
"""Two workers, the CI profile's Hypothesis examples, and hang guards three times as long: every operation is a
process (docker exec, an ssh round trip, a bwrap launch), and the model-based rule's bound is for all its steps."""


def _service(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f'{name} is not set: start the services with `bash ci/services/up.sh` (nox -s targets does)')
    return value


ONE_LOOP = ['asyncio']
"""Every real target runs on asyncio alone: trio is certified in-process (local, local-shell, the doubles) in `tests`.
Bubblewrap on trio as well cost 120 of the step's worker-seconds (its 4 to 16 MiB file rules and a 90 s expected
failure on each loop) and found nothing asyncio did not."""


def _required_targets() -> dict[str, list[str]]:
    """Each required run (named as its report directory) and its arguments; each checks its isolation claims too."""
    docker_image = ['--image', _service('WC_DOCKER_IMAGE'), '--user', '1000:1000']
    return {
        # With the harness's DockerSandbox capability: the backend and capability verdicts side by side.
        'docker': [*docker_image, '--capability', *ISOLATION, *SLOW_PROVIDER],
        'docker+runtime=runsc': [*docker_image, '--runtime', 'runsc', *ISOLATION, *SLOW_PROVIDER, *BULK_LEFT_OUT],
        'podman': [
            *['--image', _service('WC_PODMAN_IMAGE'), '--user', '1000:1000'],
            *[*ISOLATION, *SLOW_PROVIDER, *BULK_LEFT_OUT],
        ],
        'ssh': [
            '--host',
            _service('WC_SSH_HOST'),
            '--ssh-config',
            _service('WC_SSH_CONFIG'),
            *ISOLATION,
            *SLOW_PROVIDER,
        ],
        'bubblewrap': [*ISOLATION, *SLOW_PROVIDER],
    }


BULK_DATA_RULES = (
    'large_file_round_trip',
    'generated_names_round_trip',
    'generated_payloads_round_trip',
    'generated_nested_paths_round_trip',
    'file_operations_match_the_reference_model',
    'names_with_shell_metacharacters_round_trip',
)
"""The backend rules that push bulk data through pydantic-ai's shell filesystem: 40 % of a container run's rule time
(podman 395 of 980 s, 1,037 of its 2,359 `podman exec` calls). gVisor and Podman run the harness's DockerSandboxBackend,
the same code and busybox image as docker, whose CI run keeps them all; the full certification of each target, these
rules included, is its bundle in submissions/ (scripts/real_target_bundles.sh, redone whenever a rule changes)."""
BULK_LEFT_OUT = ['-k', 'not (' + ' or '.join(BULK_DATA_RULES) + ')']
LEFT_TO_THE_BUNDLE = {'docker+runtime=runsc': BULK_DATA_RULES, 'podman': BULK_DATA_RULES}
"""The runs CI certifies without `BULK_DATA_RULES`: those rules are `missing` in their report (so its verdict is
`not certified`); `selection.json` beside it says which and why, and the matrix shows the verdict of the rules run."""
SELECTION_FILE = 'selection.json'

ISOLATION = ['--isolation']
"""The isolation suite beside the backend suite, with the claims the target's provider documents."""
STATED_CLAIMS: dict[str, Claims] = {
    'docker': DOCKER_CLAIMS,
    'docker+runtime=runsc': GVISOR_CLAIMS,
    'podman': PODMAN_CLAIMS,
    'ssh': SSH_CLAIMS,
    'bubblewrap': BUBBLEWRAP_CLAIMS,
}
"""What each run's target claims (targets/claims.py): the isolation suite must check exactly these."""


def _suite(report: Report, name: str) -> SuiteReport:
    """The report's suite whose class is `name` (`TestCertification`, `TestIsolation`), whatever the suites' order."""
    found = [suite for suite in report.suites if suite.suite_class == name]
    assert len(found) == 1, f'{name}: {[suite.subject for suite in report.suites]}'
    return found[0]


def _isolation_checked(report: Report, stated: Claims, run: str) -> None:
    """The isolation suite checked the stated claims: each held, or failed only as a recorded finding."""
    isolation = _suite(report, 'TestIsolation').isolation
    assert isolation is not None, f'{run}: the isolation suite reported no claims'
    assert isolation.claimed == sorted(stated.claims), f'{run}: {isolation}'
    assert not isolation.unchecked, f'{run}: claims no rule could check: {isolation}'
    findings = {rule.area for rule in _suite(report, 'TestIsolation').rules if rule.status == 'gap'}
    assert set(isolation.failed) <= findings, f'{run}: a claim failed without a recorded finding: {isolation}'


ENGINE_TRANSIENT = (
    'OCI runtime exec failed',
    "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount",
)
"""Errors of a container engine, or of the host beside it, that say nothing of the backend or the rule. In one CI run
of 2026-12-01, gVisor's runsc failed one `docker exec` of the twelve at once in
`concurrent_writes_to_different_files_land_intact` (`runsc did not terminate successfully: exit status 128`); 400
execs, 40 at a time on a loaded machine, did not repeat it. In one of 2026-12-08, one `bwrap` launch of the
bubblewrap run failed while it copied the host's mounts: a container of the docker run beside it was unmounting its
overlay (`remount ".../docker/data/overlay2/<id>/merged": Invalid argument`). Such rules are checked once more and
must pass then."""


def _engine_transient(report: Report) -> list[str]:
    """The backend suite's failed rules when every failure is an engine's transient error (else none)."""
    failed = [result for result in _suite(report, 'TestCertification').results if result.outcome == 'failed']
    if failed and all(any(marker in (result.excerpt or '') for marker in ENGINE_TRANSIENT) for result in failed):
        return sorted({result.rule_id for result in failed})
    return []


def _certify(
    run: str, arguments: list[str], scratch: Path, output: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `workspace-conformance certify TARGET` (the run's name up to `+`) with its own TMPDIR, for the matrix."""
    temporary = scratch / 'tmp'
    temporary.mkdir(parents=True)
    output = output or REPORTS / run
    output.mkdir(parents=True, exist_ok=True)
    for stale in output.iterdir():
        stale.unlink()
    target = run.partition('+')[0]
    if '--anyio-backend' not in arguments:
        arguments = [*arguments, '--anyio-backend', 'asyncio']
    command = [sys.executable, '-m', 'workspace_conformance', 'certify', target, *arguments]
    command += ['--require', '--report', str(output)]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=CERTIFY_TIMEOUT,
        env={**os.environ, 'TMPDIR': str(temporary)},
        cwd=scratch,
        check=False,
    )


def _processes_mentioning(text: str, environment: str | None = None) -> list[str]:
    """Processes whose argv has `text` (and, given `environment`, whose environment has that `NAME=value` entry)."""
    found = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command_line = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
            if text in command_line and environment is not None:
                entries = (entry / 'environ').read_bytes().decode(errors='replace').split('\0')
                if environment not in entries:
                    continue
        except OSError:
            continue
        if text in command_line:
            found.append(f'{entry.name}: {command_line[:200]}')
    return found


def _leftovers(target: str, scratch: Path) -> list[str]:
    """What the run left: files in its TMPDIR, processes naming it, containers, remote directories."""
    left = [f'temporary file {path}' for path in (scratch / 'tmp').rglob('*')]
    left += [f'process {line}' for line in _processes_mentioning(str(scratch / 'tmp'))]
    # Only this run's canaries: they inherit its TMPDIR. A certification on the other xdist worker has its own
    # canaries alive meanwhile (CI once failed both micro-VM runs on another run's 300 s sleeper).
    canaries = _processes_mentioning('wcs-isolation-process-', f'TMPDIR={scratch / "tmp"}')
    left += [f'isolation canary process {line}' for line in canaries]
    if target in ('docker', 'podman'):
        left += [f'container {name}' for name in _containers(target)]
    if target == 'ssh':
        listed = subprocess.run(
            ['ssh', '-F', _service('WC_SSH_CONFIG'), _service('WC_SSH_HOST'), f'ls -A {REMOTE_ROOT} 2>/dev/null'],
            capture_output=True,
            text=True,
            check=False,
        )
        left += [f'remote directory {REMOTE_ROOT}/{name}' for name in listed.stdout.split()]
        left += [f'process {line}' for line in _processes_mentioning('wc-ssh-')]
    return left


ONE_DOCKER_ENGINE = pytest.mark.xdist_group('docker-engine')
"""The runs on the one Docker engine go to one xdist worker, one after another: the interrupted run waits for the
first container it sees and then checks none is left, which a run beside it on the same engine would falsify. The
other targets (podman, sshd, bubblewrap, in-process) run on the other workers meanwhile (noxfile's REAL_XDIST: three).
The step is mostly CPU-bound on 2 cores: each backend call is a `docker exec` (about 0.08 CPU-seconds on runc, 0.11
on gVisor) or `podman exec` (0.14) (bench/engine_exec_cost.py); a third worker fills the time the expected failures
wait out their bounds (the step: 583 s with two workers, 461 s with three on 2026-12-08)."""


@pytest.mark.parametrize(
    'run',
    [
        pytest.param('docker', marks=ONE_DOCKER_ENGINE),
        pytest.param('docker+runtime=runsc', marks=ONE_DOCKER_ENGINE),
        'podman',
        'ssh',
        'bubblewrap',
    ],
)
def test_a_real_target_is_certified_or_partial_with_every_gap_explained(run: str, tmp_path: Path) -> None:
    target = run.partition('+')[0]
    done = _certify(run, _required_targets()[run], tmp_path)
    sys.stdout.write(done.stdout[-3000:])
    report_path = REPORTS / run / 'report.json'
    assert report_path.exists(), f'no report for {run}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr}'
    report = load_report(report_path)
    transient = _engine_transient(report)
    if transient:  # checked again, once: the rules must pass then, and the first report keeps what happened
        sys.stdout.write(f'\n{run}: only transient engine errors failed {transient}; checking those rules again\n')
        again = _certify(
            run, [*_required_targets()[run], '-k', ' or '.join(transient)], tmp_path / 'again', tmp_path / 'report'
        )
        rerun = load_report(tmp_path / 'report' / 'report.json')
        outcomes = {
            (r.rule_id, r.outcome) for r in _suite(rerun, 'TestCertification').results if r.rule_id in transient
        }
        assert outcomes and {outcome for _, outcome in outcomes} == {'passed'}, f'{run}: {outcomes}\n{again.stdout}'
        assert _leftovers(target, tmp_path / 'again') == []
    backend = _suite(report, 'TestCertification')
    assert backend.anyio_backends == ONE_LOOP, f'{run}: {backend.anyio_backends}'

    left_out = LEFT_TO_THE_BUNDLE.get(run, ())
    missing = sorted(summary.rule_id for summary in backend.rules if summary.status == 'missing')
    assert missing == sorted(left_out), f'{target}: rules without a result {missing}, left out {sorted(left_out)}'
    assert report.complete or left_out, f'{target}: the run did not finish every rule'
    if left_out:
        record = {'left_out': list(left_out), 'why': 'bulk data rules: see the bundle in submissions/ for them'}
        (REPORTS / run / SELECTION_FILE).write_text(json.dumps(record, indent=2) + '\n', encoding='utf-8')
    _isolation_checked(report, STATED_CLAIMS[run], run)
    ran = [summary for summary in backend.rules if summary.rule_id not in left_out]
    verdict = verdict_of(ran)
    assert transient or verdict in ('certified', 'partial'), f'{target}: {verdict}\n{done.stdout[-4000:]}'
    # A capability suite beside it may be `not certified` by its target's declared expected failures (the harness's
    # DockerSandbox attaches to any container id a ref names): every rule below is still a pass or a reasoned gap.
    assert done.returncode == (0 if report.verdict == 'certified' else 1)
    for summary in (summary for suite in report.suites for summary in suite.rules if summary.rule_id not in transient):
        if summary.rule_id in left_out:
            continue
        assert summary.status in ('passed', 'gap', 'not-applicable', 'advisory'), f'{summary.rule_id}: {summary.detail}'
        if summary.status == 'gap':
            kind, _, reason = (summary.detail or '').partition(':')
            assert kind and reason.strip(), f'{target}: gap {summary.rule_id} has no reason: {summary.detail!r}'
    assert _leftovers(target, tmp_path) == [], done.stderr[-2000:]


# Here, right after the real targets, not last: the run spends much of its time waiting (hang guards at time scale 3,
# sandboxes starting), so started last it left both CI workers idle for over a minute at the end (ci6: 70 s at 2%
# busy); the short in-process runs below fill the end instead.
def test_e2b_local_certifies_the_harness_e2b_sandbox_through_the_real_sdk_and_leaves_nothing(tmp_path: Path) -> None:
    """The target starts `serve e2b` itself (bwrap, which CI installs, confines its sandboxes) and stops it after.

    The harness's E2BSandbox capability is certified beside its backend (`--capability`). Both verdicts are `not
    certified`: core rules fail as they fail on E2B, each a strict expected failure or a declared limit with its
    reason (docs/e2b-local.md). What must hold is that every rule ran and is a pass or a reasoned gap, that the
    report names the emulation, and that no sandbox process or file outlives the run.
    """
    # Hang guards three times as long, as for the other real targets: on a loaded CI machine (load 20 on 2 cores
    # was seen) the 10 s bound of a_redirected_background_job_does_not_delay_run once ran out.
    arguments = ['--capability', *ISOLATION, '--conformance-profile', 'ci', '--conformance-time-scale', '3']
    done = _certify('e2b-local', arguments, tmp_path)
    report = load_report(REPORTS / 'e2b-local' / 'report.json')
    assert report.complete, done.stdout[-4000:]
    assert _suite(report, 'TestCertification').anyio_backends == ['asyncio']
    assert len(report.suites) == 3, [suite.subject for suite in report.suites]  # backend, capability, isolation
    # The service confines its sandboxes with bwrap where a command can join their namespaces (as root), else it
    # runs them unconfined and claims nothing (docs/e2b-local.md).
    stated = E2B_LOCAL_CLAIMS if bwrap_path() is not None else E2B_LOCAL_UNCONFINED
    _isolation_checked(report, stated, 'e2b-local')
    for summary in (summary for suite in report.suites for summary in suite.rules):
        assert summary.status in ('passed', 'gap', 'not-applicable', 'advisory'), f'{summary.rule_id}: {summary.detail}'
    # The target stops a sandbox with a filesystem-only pause and starts it by connecting: both restart rules run.
    restarts = {
        summary.rule_id: summary.status
        for summary in _suite(report, 'TestCertification').rules
        if summary.rule_id.startswith(('an_environment_whose_init_died', 'a_backend_attached_after_a_restart'))
    }
    assert restarts and set(restarts.values()) == {'passed'}, restarts
    assert 'E2B (emulated: workspace-conformance serve e2b)' in (REPORTS / 'e2b-local' / 'report.md').read_text()
    assert _leftovers('e2b-local', tmp_path) == [], done.stderr[-2000:]
    assert _processes_mentioning('e2b-local-') == []


@pytest.mark.parametrize(
    ('target', 'credential'),
    [('e2b', 'E2B_API_KEY'), ('modal', 'MODAL_TOKEN_ID'), ('daytona', 'DAYTONA_API_KEY'), ('sprites', 'SPRITE_TOKEN')],
)
def test_a_hosted_target_runs_only_with_its_credentials_and_is_never_passed_without(
    target: str, credential: str, tmp_path: Path
) -> None:
    if os.environ.get(credential):
        done = _certify(target, [], tmp_path)
        report = load_report(REPORTS / target / 'report.json')
        assert report.complete and report.verdict in ('certified', 'partial'), done.stdout[-4000:]
        assert _leftovers(target, tmp_path) == []
        return
    done = _certify(target, [], tmp_path)
    assert done.returncode == 1, 'a required target that cannot run must fail (--require)'
    assert f'{target}: not run: no {credential}' in done.stdout
    record = json.loads((REPORTS / target / NOT_RUN_FILE).read_text())
    assert record == {'target': target, 'verdict': 'not run', 'reason': f'no {credential}'}
    assert not (REPORTS / target / 'report.json').exists()


@pytest.mark.parametrize(('target', 'option'), [('boxlite', 'WC_BOXLITE_ROOTFS'), ('smol', None)])
def test_a_micro_vm_target_is_certified_where_it_boots_and_not_run_with_the_boot_failure_where_not(
    target: str, option: str | None, tmp_path: Path
) -> None:
    """ci/services booted one test VM (the boot probe); the target runs if it booted, else says why it did not."""
    record = json.loads(boot_record_path(target).read_text())
    arguments = ['--rootfs', _service(option)] if option else []
    done = _certify(target, [*arguments, '--conformance-profile', 'ci', '--conformance-time-scale', '3'], tmp_path)
    if record['booted']:
        report = load_report(REPORTS / target / 'report.json')
        assert report.complete and report.verdict in ('certified', 'partial'), done.stdout[-4000:]
    else:
        reason = f'the micro-VM does not boot here: {record["reason"]}'
        assert done.returncode == 1, 'a required target that cannot run must fail (--require)'
        assert f'{target}: not run: {reason}' in done.stdout, done.stdout[-2000:]
        not_run = json.loads((REPORTS / target / NOT_RUN_FILE).read_text())
        assert not_run == {'target': target, 'verdict': 'not run', 'reason': reason}
    assert _leftovers(target, tmp_path) == [], done.stderr[-2000:]


@ONE_DOCKER_ENGINE
def test_an_interrupted_docker_certification_removes_its_containers(tmp_path: Path) -> None:
    """Ctrl-C once containers exist: the run ends, its report says incomplete, and no container is left."""
    temporary = tmp_path / 'tmp'
    temporary.mkdir()
    output = tmp_path / 'report'
    # -X faulthandler: a run that does not end after Ctrl-C is sent SIGABRT, whose dump of every thread shows where.
    command = [sys.executable, '-X', 'faulthandler', '-m', 'workspace_conformance', 'certify', 'docker']
    command += ['--image', _service('WC_DOCKER_IMAGE'), '--anyio-backend', 'asyncio', '--report', str(output)]
    process = subprocess.Popen(
        command,
        env={**os.environ, 'TMPDIR': str(temporary)},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Ctrl-C's default action, as a shell's foreground job has: a non-interactive shell starts a background job
        # with SIGINT ignored, which `exec` keeps, and Python then installs no Ctrl-C handler. CI started that way
        # (`bash .ci/run &`, as every run here was) left this run deaf to the Ctrl-C below (tests/hostile/probe.py
        # does the same).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _containers():
            time.sleep(0.2)
        assert _containers(), 'the run created no container within 120 s'
        process.send_signal(signal.SIGINT)
        try:
            output_text, _ = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            dumped, _ = process.communicate(timeout=30)
            pytest.fail(f'the run did not end within 60 s of Ctrl-C; its threads then:\n{dumped[-12000:]}')
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        left = _containers()
        if left:  # the runs after this one on the same engine check that none is left: this failure stays here
            engine_for('docker').remove(left)
    assert process.returncode != 0, output_text[-3000:]
    assert (output / 'report.json').exists(), f'an interrupted run wrote no report:\n{output_text[-3000:]}'
    assert not load_report(output / 'report.json').complete, output_text[-2000:]
    assert left == [], output_text[-2000:]
    assert list(temporary.iterdir()) == []


def _containers(engine: str = 'docker') -> list[str]:
    """The containers any run labelled (the targets' cleanup finds its own the same way: targets/_engine.py)."""
    listed, why = engine_for(engine).labelled(RUN_LABEL)
    assert why is None, f'{engine} did not list its containers: {why}'
    return listed


@pytest.mark.parametrize(
    ('target', 'verdict'),
    [('local', 'certified'), ('local-shell', 'certified'), ('provider', 'certified'), ('memory', 'partial')],
)
def test_an_in_process_target_joins_the_matrix(target: str, verdict: str, tmp_path: Path) -> None:
    # LocalWorkspace, on the harness's pydantic-ai; and local claims no isolation, which leaves its verdict alone.
    also = ['--capability', *ISOLATION] if target == 'local' else []
    done = _certify(target, ['--conformance-profile', 'ci', *also], tmp_path)
    report = load_report(REPORTS / target / 'report.json')
    assert report.complete and report.verdict == verdict, done.stdout[-4000:]
    if target == 'local':
        isolation = _suite(report, 'TestIsolation')
        assert isolation.isolation is not None and isolation.isolation.claimed == [], isolation.isolation
        assert {rule.status for rule in isolation.rules} == {'not-applicable'}
        assert 'isolation: no isolation claimed' in done.stdout
    assert _leftovers(target, tmp_path) == [], done.stderr[-2000:]
