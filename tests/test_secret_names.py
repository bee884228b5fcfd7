"""One secret-name pattern: the report redactor and the capability suite's `secrets` default both read `SECRET_NAME`."""

from __future__ import annotations

import pytest

from workspace_conformance.capability import _secrets
from workspace_conformance.capability._secrets import runners_secrets
from workspace_conformance.reports import redact
from workspace_conformance.reports.redact import REDACTED, Redactor
from workspace_conformance.vocabulary import SECRET_NAME

SECRET_NAMES = (
    'API_KEY',
    'MY_TOKEN',
    'DB_PASSWORD',
    'AUTH_HEADER',
    'SESSION_ID',
    'PRIVATE_KEY',
    'AWS_SECRET_ACCESS_KEY',
    'GCP_CREDENTIALS',
    'COOKIE_JAR',
    'github_token',
)
PLAIN_NAMES = ('PATH', 'HOME', 'LANG', 'PWD', 'SHELL', 'TERM')
VALUE = '/a/path/that/is/secret'
"""A path-shaped value: the redactor keeps paths unless the name looks secret, so only the name decides."""


def test_both_users_read_the_one_pattern() -> None:
    assert vars(_secrets)['SECRET_NAME'] is SECRET_NAME
    assert vars(redact)['SECRET_NAME'] is SECRET_NAME


@pytest.mark.parametrize('name', SECRET_NAMES)
def test_a_secret_looking_name_is_redacted_and_held_as_a_secret(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert SECRET_NAME.search(name)
    assert Redactor({name: VALUE})(f'saw {VALUE}') == f'saw {REDACTED}'
    monkeypatch.setenv(name, VALUE)
    assert VALUE in runners_secrets()


@pytest.mark.parametrize('name', PLAIN_NAMES)
def test_a_plain_name_is_neither_redacted_nor_held_as_a_secret(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not SECRET_NAME.search(name)
    assert Redactor({name: VALUE})(f'saw {VALUE}') == f'saw {VALUE}'
    monkeypatch.setenv(name, VALUE)
    assert VALUE not in runners_secrets()
