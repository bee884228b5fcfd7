"""The suite touches only its own scratch directories (or sacrificial ones): every path and command, audited.

The local target is certified through a wrapper that logs every protocol call with the rule making it: each
path an operation names, and each command with its argv. The log is then checked: writes and removes land in
a rule's scratch directory; the absolute paths a command names are scratch, sacrificial or system paths the
suite only reads; and the working directory is left as empty as it started, so no command wrote there through
a relative path.

One run on asyncio, shared by every test here on one xdist worker: no rule body branches on the event loop (the
paths it names are its own), and both loops of the local target are certified by test_self_certification.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance.engine._support import SCRATCH_PREFIX

pytestmark = pytest.mark.xdist_group('path_audit')
"""Every test here reads the one audited run: on one worker, the module fixture certifies once, not once per worker."""

AUDITED = """
import json
import os
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance._mirror import Mirror, mirrored_class, protocol_members
from workspace_conformance.targets import local_target

LOCAL = local_target()


class Audited(Mirror):
    def __init__(self, wrapped):
        self._wrapped = wrapped

    async def _intercept(self, name, args, kwargs, call):
        rule = os.environ.get('PYTEST_CURRENT_TEST', '?').split('::')[-1].split(' ')[0]
        named = args[0] if args else ''
        command = named if isinstance(named, str) else list(named)
        entry = {'rule': rule, 'operation': name, 'command' if name == 'run' else 'path': command}
        with open(os.environ['AUDIT_LOG'], 'a') as log:
            log.write(json.dumps(entry) + '\\n')
        return await call()


def audited(backend):
    return mirrored_class(Audited, protocol_members(backend))(backend)


class TestAuditedLocal(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    def anyio_backend(self):
        return 'asyncio'

    @pytest.fixture(scope='class')
    @classmethod
    def run_dir(cls, tmp_path_factory, anyio_backend):
        return tmp_path_factory.mktemp('audit-' + anyio_backend)

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, run_dir):
        (run_dir / 'shared').mkdir()
        return audited(LocalWorkspaceBackend(run_dir / 'shared'))

    @pytest.fixture
    def fresh_backend(self, run_dir):
        return lambda: audited(LOCAL.fresh_backend(run_dir))

    @pytest.fixture
    def destructive_backend(self, run_dir):
        return lambda: audited(LOCAL.destructive_backend(run_dir))

    @pytest.fixture
    def attach_backend(self, run_dir):
        return lambda ref: audited(LOCAL.attach_backend(run_dir, ref))

    @pytest.fixture
    def destroy_environment(self):
        return LOCAL.destroy_environment
"""


SYSTEM_READS = frozenset(
    {'/dev/null', '/dev/zero', '/bin/sh', '/proc/$1/stat', '/proc/self/environ', '/proc/self/cmdline'}
)
"""Absolute paths outside scratch that the suite's commands name, each only ever read (or written to discard)."""
ABSOLUTE = re.compile(r"(?<![\w.$}%#])/[^\s'\"`;|&<>()\\]+")
"""An absolute path in a command: a `/` not inside a word or a shell expansion (`${1%/*}` names no path)."""


def _in_scratch(path: str) -> bool:
    return any(part.startswith(SCRATCH_PREFIX) for part in path.split('/'))


def _sacrificial(rule: str, path: str, *, mutation: bool = True) -> bool:
    """Whether `path` is sacrificial data: a destructive environment, or the way down to it.

    Only the refusal rule may write or remove there: it asks a sacrificial environment to remove itself, and
    the ancestors that hold nothing but the way down to it (the local target's `destructive` folder, before
    other environments exist); and the rule that writes to an environment it then destroys. Any rule handed a
    destructive environment may read it and name it in commands.
    """
    writers = ('test_remove_refuses_the_working_dir', 'test_every_operation_on_a_destroyed_environment')
    if '/destructive/sacrificial-' in path:
        return not mutation or rule.startswith(writers)
    return rule.startswith('test_remove_refuses_the_working_dir') and path.endswith('/destructive')


@pytest.fixture(scope='module')
def audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, object]], Path]:
    """Certify the audited local target once: the log of every call, and the inner run's basetemp."""
    root = tmp_path_factory.mktemp('audit')
    log, basetemp = root / 'audit.jsonl', root / 'basetemp'
    (root / 'test_audited.py').write_text(AUDITED)
    finished = subprocess.run(
        [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-p', 'no:xdist', f'--basetemp={basetemp}', '-q'],
        cwd=root,
        env={**os.environ, 'AUDIT_LOG': str(log)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), finished.stdout[-2000:]
    return [json.loads(line) for line in log.read_text().splitlines()], basetemp


def test_every_write_and_remove_stays_in_scratch(audit: tuple[list[dict[str, object]], Path]) -> None:
    records, _ = audit
    mutations = [r for r in records if r['operation'] in ('write_bytes', 'make_dir', 'remove')]
    outside = [
        f'{r["rule"]}: {r["operation"]}({r["path"]!r})'
        for r in mutations
        if not (_in_scratch(str(r['path'])) or _sacrificial(str(r['rule']), str(r['path'])))
    ]
    assert not outside, 'writes or removes outside the rule scratch directories:\n' + '\n'.join(outside)
    assert len({r['rule'] for r in mutations}) > 50
    assert all(posixpath.isabs(str(r['path'])) for r in mutations)


def test_every_command_names_only_scratch_sacrificial_or_read_only_system_paths(
    audit: tuple[list[dict[str, object]], Path],
) -> None:
    records, _ = audit
    commands = [r for r in records if r['operation'] == 'run']
    named = 0
    outside = []
    for record in commands:
        command = record['command']
        assert isinstance(command, str | list), command
        text = command if isinstance(command, str) else ' '.join(str(item) for item in command)
        for path in ABSOLUTE.findall(text):
            named += 1
            rule = str(record['rule'])
            if not (_in_scratch(path) or _sacrificial(rule, path, mutation=False) or path in SYSTEM_READS):
                outside.append(f'{record["rule"]}: {path} in {text[:200]!r}')
    assert not outside, 'commands naming paths outside scratch:\n' + '\n'.join(outside)
    assert len(commands) > 100 and named > 100, (len(commands), named)


def test_every_path_read_is_scratch_the_working_dir_or_sacrificial(
    audit: tuple[list[dict[str, object]], Path],
) -> None:
    records, basetemp = audit
    working_dirs = {str(path) for path in basetemp.glob('audit-*[0-9]/shared')}
    assert len(working_dirs) == 1, working_dirs  # the one event loop's
    reads = [r for r in records if r['operation'] in ('read_bytes', 'stat', 'exists', 'list_dir', 'realpath')]
    (working_dir,) = working_dirs
    # pydantic-ai's `authority_of` asks `realpath` of each directory on the way to a path (to find links there): the
    # working dir's ancestors resolve no further than `realpath(working_dir)` does, and no file is read.
    on_the_way = {posixpath.dirname(working_dir)}
    while (parent := posixpath.dirname(min(on_the_way, key=len))) not in on_the_way:
        on_the_way.add(parent)
    outside = [
        f'{r["rule"]}: {r["operation"]}({r["path"]!r})'
        for r in reads
        if not (
            _in_scratch(str(r['path']))
            or _sacrificial(str(r['rule']), str(r['path']), mutation=False)
            or posixpath.normpath(str(r['path'])) in working_dirs
            or (r['operation'] == 'realpath' and posixpath.normpath(str(r['path'])) in on_the_way)
        )
    ]
    assert not outside, 'reads outside scratch:\n' + '\n'.join(outside)
    assert len(reads) > 500


def test_the_working_dir_is_left_empty(audit: tuple[list[dict[str, object]], Path]) -> None:
    """What commands wrote through relative paths, or rules forgot to remove, would still be here."""
    _, basetemp = audit
    left = [str(path) for shared in basetemp.glob('audit-*[0-9]/shared') for path in shared.rglob('*')]
    assert not left, left
