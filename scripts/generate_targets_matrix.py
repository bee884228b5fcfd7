"""Write docs/targets.md, the certification matrix, from the reports of the latest run of the real targets.

Usage: python scripts/generate_targets_matrix.py [REPORTS_DIR] [--out docs/targets.md]

REPORTS_DIR (default build/targets) holds one directory per target with the `report.json` that
`workspace-conformance certify --report` wrote, or the `not-run.json` of a target that could not run. A run of a
target with options that set it apart is in `<target>+<option>=<value>` (`docker+runtime=runsc`), shown as
`docker --runtime runsc` right after the target's own row. The findings (defects of real backends, each with a
reproduction) are kept here in FINDINGS and written after the matrix.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

from workspace_conformance.reports.model import Report, RuleSummary, SuiteReport, verdict_of
from workspace_conformance.reports.verify import load_report
from workspace_conformance.targets import NAMED_TARGETS
from workspace_conformance.targets.e2b_local import LABEL as E2B_LABEL
from workspace_conformance.targets.listing import NOT_RUN_FILE

ROOT = Path(__file__).resolve().parents[1]
SELECTION_FILE = 'selection.json'
"""Beside a run's report: the rules it left out on purpose (tests/real_targets writes it for CI's selections)."""

FINDINGS: dict[str, str] = {
    'docker --runtime runsc': """\
**A command whose container is removed may never return.** `docker rm --force` of a gVisor (`runsc`)
container while `docker exec` runs in it leaves the `docker exec` client waiting (still waiting after 90 s) in
about half the tries; with runc it exits 137 at once. `DockerSandboxBackend` waits for `docker exec`, so the
command ends with `WorkspaceTimeoutError` at its timeout instead of `WorkspaceUnavailableError`
(`destroying_environment_during_command_raises_unavailable`). Because the outcome is a race, it cannot be a
strict expected failure; the target declares it as a limit (with this reason) when `--runtime runsc` is given.
Seen with Debian 12's runsc 0.0~20221219 and docker.io 20.10.24:

```sh
c=$(docker run -d --network none --runtime runsc busybox sleep 600)
( timeout 12 docker exec "$c" sh -c 'sleep 60'; echo "exec exit $?" ) &   # 124: still waiting; runc: 137
sleep 2; docker rm --force "$c"; wait
```""",
    'podman': """\
**A container whose creation was cancelled is left half-made, and the next operation fails.** Cut short at the
right moment, `podman run` leaves the container `Initialized` (runc created it, nothing started it), and the
next `podman start` fails (`runc start ... failed: exit status 1`), so the backend raises
`WorkspaceUnavailableError` instead of going on with the environment it created
(`cancellation_mid_create_keeps_the_ref`). It is a race: one run failed the rule on asyncio and passed it on
trio, so the target declares it as a limit (with this reason), which a strict expected failure cannot hold.
Seen with Podman 4.3.1 and runc on Debian 12; it takes a cut between about 0.2 and 0.3 s here:

```sh
timeout -s INT 0.2 podman run -d --name wc-cancelled --network none busybox sleep 600
podman ps -a --filter name=wc-cancelled --format '{{.Status}}'   # Initialized
podman start wc-cancelled                                          # Error: ... runc start ... exit status 1
```""",
    'ssh': """\
**A command returns only when its background children exit.** sshd keeps the session open while any process
holds the command's output pipes, so `run()` of a command that starts a background job returns only when that
job ends (`background_child_does_not_hold_up_completed_command`, a strict expected failure of the target,
documented by `SSHWorkspaceBackend`). Seen with Debian 12's OpenSSH:

```sh
time ssh host 'sleep 5 & echo started'                     # returns after 5 s
time ssh host 'sleep 5 >/dev/null 2>&1 & echo started'     # returns at once
```""",
    'bubblewrap': """\
**A command keeps running after its environment is deleted.** The sandbox bind-mounts the working directory,
so inside it the directory is still there after it is deleted on the host, and a command waiting for it to go
runs on until its timeout (`destroying_environment_during_command_raises_unavailable`, a strict expected
failure of the target: it raises `WorkspaceTimeoutError`, not `WorkspaceUnavailableError`). Seen with Debian
12's bubblewrap 0.8.0:

```sh
mkdir -p /tmp/env/ws; ( sleep 1; rm -rf /tmp/env ) &
timeout 5 bwrap --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \\
    --bind /tmp/env/ws /tmp/env/ws sh -c 'while [ -d /tmp/env/ws ]; do sleep 0.1; done'; echo "exit $?"  # 124
```""",
}
"""Each real backend defect the matrix shows, by row label: what fails, the rule, and a reproduction."""


def _seconds(report: Report) -> float:
    return (datetime.fromisoformat(report.finished) - datetime.fromisoformat(report.started)).total_seconds()


def _cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _label(directory: str) -> str:
    """`docker+runtime=runsc` -> `docker --runtime runsc`: the target and the options that set the run apart."""
    target, *options = directory.split('+')
    # A target that emulates a hosted service says so wherever it is named (e2b-local: never plain "E2B").
    shown = f'{target} ({E2B_LABEL})' if target == 'e2b-local' else target
    return ' '.join([shown, *(f'--{name} {value}' for name, _, value in (o.partition('=') for o in options))])


def _backend_suite(report: Report) -> SuiteReport:
    """The backend suite's report (`TestCertification[...]`), whatever the order of the suites beside it."""
    named = (suite for suite in report.suites if suite.suite_class == 'TestCertification')
    return next(named, report.suites[0])


def _isolation(report: Report) -> str:
    """The isolation suite's claims held and failed, or `not checked` when the run had no `--isolation`."""
    found = [suite.isolation.summary for suite in report.suites if suite.isolation is not None]
    return '; '.join(found) or 'not checked'


def _left_out(directory: Path) -> frozenset[str]:
    """The rules a run left out on purpose (its `selection.json`, written by the real targets' test), or none."""
    path = directory / SELECTION_FILE
    return frozenset(json.loads(path.read_text(encoding='utf-8'))['left_out']) if path.exists() else frozenset()


def _ran(report: Report, left_out: frozenset[str]) -> list[RuleSummary]:
    """The rules of every suite in the report (the isolation suite's too) but those the run left out on purpose."""
    return [summary for suite in report.suites for summary in suite.rules if summary.rule_id not in left_out]


def _verdict(report: Report, left_out: frozenset[str]) -> str:
    """The report's verdict; for a run that left rules out, the verdict of the rules it ran, marked a selection."""
    if not left_out:
        return f'**{report.verdict}**'
    ran = verdict_of(_ran(report, left_out))
    return f'**{ran}** on the rules run ({len(left_out)} bulk-data rules left to its bundle)'


def _target_section(name: str, report: Report, left_out: frozenset[str] = frozenset()) -> list[str]:
    summaries = _ran(report, left_out)
    suite = _backend_suite(report)
    statuses = ('passed', 'failed', 'advisory', 'gap', 'missing')
    counts = {status: sum(s.status == status for s in summaries) for status in statuses}
    lines = [
        f'## {name}: {_verdict(report, left_out).replace("**", "")}',
        '',
        f'{counts["passed"]} of {len(summaries)} rules passed on {", ".join(suite.anyio_backends)}; '
        f'pydantic-ai-slim {report.pydantic_ai_version}; {_seconds(report):.0f} s wall time. '
        f'Isolation: {_isolation(report)}.',
        '',
    ]
    if left_out:
        lines += [
            'Left out in CI, run in its bundle in submissions/: ' + ', '.join(f'`{rule}`' for rule in sorted(left_out)),
            '',
        ]
    for title, waivers in (('Declared limits', suite.declared_limits), ('Expected failures', suite.expected_failures)):
        if waivers:
            lines += [f'{title}:', '']
            lines += [f'- `{waiver.rule_id}`: {waiver.reason}' for waiver in waivers]
            lines.append('')
    problems = [s for s in summaries if s.status in ('gap', 'failed', 'advisory', 'missing', 'not-applicable')]
    if problems:
        lines += ['| rule | status | why |', '|---|---|---|']
        lines += [f'| `{s.rule_id}` ({s.level}) | {s.status} | {_cell(s.detail or "")} |' for s in problems]
        lines.append('')
    return lines


def render(reports_dir: Path) -> str:
    """The matrix: one summary row per named target, then each run target's gaps and failures with reasons."""
    rows: list[str] = []
    sections: list[str] = []
    run_at = ''
    runs: list[str] = []
    for target in NAMED_TARGETS:
        runs.append(target)
        runs += sorted(path.name for path in reports_dir.glob(f'{target}+*') if path.is_dir())
    for run in runs:
        directory = reports_dir / run
        name = _label(run)
        if (directory / 'report.json').exists():
            report = load_report(directory / 'report.json')
            left_out = _left_out(directory)
            summaries = _ran(report, left_out)
            passed = sum(summary.status == 'passed' for summary in summaries)
            gaps = sum(summary.status == 'gap' for summary in summaries)
            failed = sum(summary.status in ('failed', 'missing') for summary in summaries)
            loops = ', '.join(_backend_suite(report).anyio_backends)
            rows.append(
                f'| {name} | {_verdict(report, left_out)} | {passed}/{len(summaries)} | {gaps} | {failed} | '
                f'{_cell(_isolation(report))} | {_seconds(report):.0f} s | {loops} |'
            )
            sections += _target_section(name, report, left_out)
            run_at = max(run_at, report.finished)
        elif (directory / NOT_RUN_FILE).exists():
            record = json.loads((directory / NOT_RUN_FILE).read_text(encoding='utf-8'))
            rows.append(f'| {name} | not run: {_cell(record["reason"])} | | | | | | |')
        else:
            rows.append(f'| {name} | not in this run | | | | | | |')
    header = [
        '# Certification matrix',
        '',
        '<!-- Generated by scripts/generate_targets_matrix.py from the reports of the latest run',
        '     (nox -s targets writes them to build/targets/). Do not edit by hand. -->',
        '',
        f'Latest run finished {run_at or "never"}. "Passed" counts rules; a gap is an extended rule left '
        'unchecked, with its reason; "not run" targets lacked what they need here and are never counted as passed.',
        '',
        '| target | verdict | passed | gaps | failed | isolation (claims held, failed) | wall time | event loops |',
        '|---|---|---|---|---|---|---|---|',
    ]
    intro = 'Defects of the real backends that the rules above catch, each with a reproduction.'
    findings = ['# Findings', '', intro, '']
    for label, text in FINDINGS.items():
        findings += [f'## {label}', '', text, '']
    return '\n'.join([*header, *rows, '', *sections, *findings]).rstrip() + '\n'


def main() -> int:
    """Render the matrix from REPORTS_DIR and write it to --out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument('reports', nargs='?', default=str(ROOT / 'build' / 'targets'))
    parser.add_argument('--out', default=str(ROOT / 'docs' / 'targets.md'))
    args = parser.parse_args()
    reports = Path(args.reports)
    if not reports.is_dir():
        sys.stderr.write(f'{reports}: no reports here; run `nox -s targets` first\n')
        return 2
    Path(args.out).write_text(render(reports), encoding='utf-8')
    sys.stdout.write(f'wrote {args.out}\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
