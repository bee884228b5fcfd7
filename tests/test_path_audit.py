"""Every write and remove the suite makes lands inside the rule's own scratch directory (or a sacrificial one).

The local target is certified through a wrapper that logs every mutating operation with the rule making it;
the log is then checked path by path. Commands are not audited here: the rules' shell scripts only name
paths inside their scratch directories, which the rules build themselves.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import pytest

from workspace_conformance.suite._support import SCRATCH_PREFIX

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
        if name in ('write_bytes', 'make_dir', 'remove'):
            rule = os.environ.get('PYTEST_CURRENT_TEST', '?').split('::')[-1].split(' ')[0]
            with open(os.environ['AUDIT_LOG'], 'a') as log:
                log.write(json.dumps([rule, name, str(args[0])]) + '\\n')
        return await call()


def audited(backend):
    return mirrored_class(Audited, protocol_members(backend))(backend)


class TestAuditedLocal(WorkspaceBackendSuite):
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


def test_every_write_and_remove_stays_in_scratch(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / 'audit.jsonl'
    monkeypatch.setenv('AUDIT_LOG', str(log))
    pytester.makepyfile(test_audited=AUDITED)
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider', '-p', 'no:xdist')
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()[-2000:]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    outside = []
    for rule, operation, path in records:
        in_scratch = any(part.startswith(SCRATCH_PREFIX) for part in path.split('/'))
        # The refusal rule asks a sacrificial environment to remove itself, and the ancestors that hold nothing
        # but the way down to it (the local target's `destructive` folder, before other environments exist).
        sacrificial = rule.startswith('test_remove_refuses_the_working_dir') and (
            '/destructive/sacrificial-' in path or path.endswith('/destructive')
        )
        if not (in_scratch or sacrificial):
            outside.append(f'{rule}: {operation}({path!r})')
    assert not outside, 'writes or removes outside the rule scratch directories:\n' + '\n'.join(outside)
    assert len({rule for rule, _, _ in records}) > 50
    assert all(posixpath.isabs(path) for _, _, path in records)
