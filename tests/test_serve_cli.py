"""`serve e2b` on the command line without its libraries, and with a bad port: one line, status 2, no traceback."""

from __future__ import annotations

import sys

import pytest

from workspace_conformance.cli import main


def test_serve_without_its_extra_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, 'uvicorn', None)  # `import uvicorn` raises ImportError
    assert main(['serve', 'e2b', '--port', '0']) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        'workspace-conformance: serve e2b needs \'uvicorn\': pip install "workspace-conformance[serve]"'
    ]
    assert captured.out == ''


@pytest.mark.parametrize('port', ['70000', '-1'])
def test_serve_refuses_a_port_out_of_range_in_one_line(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['serve', 'e2b', '--port', port]) == 2
    err = capsys.readouterr().err
    assert 'port' in err and 'Traceback' not in err and len(err.strip().splitlines()) == 1


def test_serve_knows_only_e2b(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['serve', 'daytona']) == 2
    assert 'Traceback' not in capsys.readouterr().err
