"""A submission folder (README.md, submission.yaml, bundle/) checked against its schema and bundle, a line a problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .verify import load_report, verify_bundle

__all__ = (
    'BUNDLE',
    'MODES',
    'README',
    'SUBMISSION',
    'Submission',
    'is_submission',
    'load_submission',
    'verify_submission',
)

SUBMISSION = 'submission.yaml'
README = 'README.md'
BUNDLE = 'bundle'
Mode = Literal['certify', 'pytest']
MODES: tuple[Mode, ...] = ('certify', 'pytest')
"""How the bundle was produced: `certify` (`workspace-conformance certify --bundle`), or `pytest` (the vendor's
own subclass of the suite, `pytest --conformance-report DIR`, then `sha256sum * > SHA256SUMS` in DIR)."""


class Submission(BaseModel):
    """What submission.yaml says: who submits, which backend and version, with which toolkit, and how it ran."""

    model_config = ConfigDict(extra='forbid', frozen=True)

    organization: str = Field(min_length=1)
    """An open-source organization, a company or a person; it may have several projects."""
    project: str = Field(min_length=1)
    """The backend's name, unique within the organization."""
    contact: list[str] = Field(min_length=1)
    """GitHub handles (or an e-mail address, a support URL) of those who maintain the folder."""
    url: str
    """The project's repository or website (http or https)."""
    backend_version: str = Field(min_length=1)
    """A snapshot of the backend: a release, a tag or a commit, never a branch name."""
    toolkit_version: str = Field(min_length=1)
    """The workspace-conformance version that made the bundle: the same as its report.json's."""
    mode: Mode

    @field_validator('url')
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(('https://', 'http://')):
            raise ValueError('an http(s):// address of the project')
        return value

    @field_validator('contact')
    @classmethod
    def _contacts(cls, value: list[str]) -> list[str]:
        if any(not contact.strip() for contact in value):
            raise ValueError('each contact is a GitHub handle, an e-mail address or a URL, not empty')
        return value


def is_submission(directory: Path) -> bool:
    """Whether `directory` is a submission folder (it holds a submission.yaml) rather than a bundle."""
    return (directory / SUBMISSION).is_file()


def _field_problem(error: dict[str, object]) -> str:
    location = '.'.join(str(part) for part in error['loc'])  # type: ignore[attr-defined]
    kind, message = error['type'], str(error['msg'])
    if kind == 'extra_forbidden':
        known = ', '.join(Submission.model_fields)
        return f'{SUBMISSION}: {location}: not a field of a submission: remove it (the fields: {known})'
    if kind == 'missing':
        return f'{SUBMISSION}: {location}: missing: add it'
    if kind == 'string_type' and isinstance(error.get('input'), int | float):  # YAML read `version: 1.10` as 1.1
        return f'{SUBMISSION}: {location}: {error["input"]} is not text: quote it ("...") so YAML keeps it as written'
    if kind == 'literal_error':
        return f'{SUBMISSION}: {location}: must be one of {", ".join(MODES)}'
    return f'{SUBMISSION}: {location}: {message.removeprefix("Value error, ")}'


def load_submission(directory: Path) -> tuple[Submission | None, list[str]]:
    """The folder's submission.yaml as a `Submission`, or None and one line per problem with it."""
    path = directory / SUBMISSION
    try:
        data = yaml.safe_load(path.read_bytes())
    except OSError as error:
        return None, [f'{SUBMISSION}: cannot read it ({error.strerror or error})']
    except yaml.YAMLError as error:
        mark = getattr(error, 'problem_mark', None)
        where = f' at line {mark.line + 1}' if mark is not None else ''
        problem = getattr(error, 'problem', None) or type(error).__name__
        return None, [f'{SUBMISSION}: not valid YAML{where} ({problem}): fix its syntax']
    if not isinstance(data, dict):
        return None, [f'{SUBMISSION}: not a mapping of fields: write one `field: value` a line']
    try:
        return Submission.model_validate(data), []
    except ValidationError as error:
        return None, [_field_problem(dict(problem)) for problem in error.errors()]


def _mode_problems(submission: Submission, bundle: Path) -> list[str]:
    """A `certify` bundle carries the certify command in environment.json; a `pytest` one has none of certify's."""
    environment = bundle / 'environment.json'
    if submission.mode == 'certify':
        try:
            command = str(json.loads(environment.read_text()).get('command', ''))
        except (OSError, ValueError, AttributeError):
            return [f'{SUBMISSION}: mode: certify, but {BUNDLE}/environment.json is missing or unreadable']
        if ' certify' not in f' {command}':
            return [f'{SUBMISSION}: mode: certify, but {BUNDLE}/environment.json records {command!r}']
    elif environment.exists():
        return [f'{SUBMISSION}: mode: pytest, but the bundle has environment.json, which certify writes: say certify']
    return []


def verify_submission(directory: Path) -> list[str]:
    """Every problem of a submission folder: README, submission.yaml, its bundle, and whether they agree."""
    problems = []
    readme = directory / README
    if not readme.is_file():
        problems.append(f'{README}: missing: add one with the steps that reproduce the bundle')
    elif '## Reproduce' not in readme.read_text(errors='replace'):
        problems.append(f'{README}: no "## Reproduce" section: add the steps that reproduce the bundle')
    submission, yaml_problems = load_submission(directory)
    problems += yaml_problems
    bundle = directory / BUNDLE
    if not bundle.is_dir():
        return [*problems, f'{BUNDLE}/: missing: put the bundle there exactly as certify wrote it']
    problems += [f'{BUNDLE}/{problem}' for problem in verify_bundle(bundle)]
    if submission is None:
        return problems
    try:
        report = load_report(bundle / 'report.json')
    except ValueError:
        return problems  # verify_bundle said why
    if report.toolkit_version != submission.toolkit_version:
        problems.append(
            f'{SUBMISSION}: toolkit_version: {submission.toolkit_version}, but the bundle was made by '
            f'{report.toolkit_version}: say {report.toolkit_version}'
        )
    return problems + _mode_problems(submission, bundle)
