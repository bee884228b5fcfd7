"""The certification bundle's extra files: environment.json, REPRODUCE.md, and SHA256SUMS over everything."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from .model import Report
from .redact import Redactor
from .verify import CHECKSUMS, WAIVERS_COPY, checksums

__all__ = ('write_bundle_extras',)

_PACKAGES = ('workspace-conformance', 'pydantic-ai-slim', 'pydantic', 'pytest', 'anyio', 'hypothesis', 'trio')


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def write_bundle_extras(
    directory: Path,
    report: Report,
    command: Sequence[str],
    import_paths: Sequence[str] = (),
    waivers: Path | None = None,
) -> None:
    """Add environment.json and REPRODUCE.md next to the report files, then hash them all into SHA256SUMS.

    `import_paths` are the directories that must be on `PYTHONPATH` to import the target's modules; the command
    in REPRODUCE.md sets it. `waivers`, the file of expected failures the run was given, is copied in as
    `expected-failures.yaml`.
    """
    if waivers is not None:
        (directory / WAIVERS_COPY).write_bytes(waivers.read_bytes())
    redact = Redactor()
    shown = ' '.join(shlex.quote(redact(part)) for part in ['workspace-conformance', *command[1:]])
    if import_paths:
        pythonpath = ':'.join(redact(str(Path(path).resolve())) for path in import_paths)
        shown = f'PYTHONPATH={shlex.quote(pythonpath)} {shown}'
    packages = {name: _installed(name) for name in _PACKAGES}
    environment = {
        'python': sys.version,
        'platform': platform.platform(),
        'machine': platform.machine(),
        'packages': packages,
        'command': shown,
    }
    (directory / 'environment.json').write_text(json.dumps(environment, indent=2) + '\n')
    pins = ' '.join(f'{name}=={version}' for name, version in packages.items() if version)
    advised = sum(rule.status == 'advisory' for suite in report.suites for rule in suite.rules)
    advisories = (
        f'{advised} {"advisory" if advised == 1 else "advisories"} (rules that do not bind the subject failed: '
        f'never a failure; listed in report.md, report.html and junit.xml), '
        if advised
        else ''
    )
    (directory / 'REPRODUCE.md').write_text(
        f'# Reproduce this certification\n\n'
        f'Verdict: **{report.verdict}** ({"complete" if report.complete else "INCOMPLETE"} run), {advisories}'
        f'{report.started} to {report.finished}, Hypothesis profile `{report.hypothesis_profile}` '
        f'(derandomized profiles give the same examples on every run).\n\n'
        f'1. Python {platform.python_version()} on {platform.system()}; install the same versions:\n\n'
        f'   ```sh\n   pip install {pins}\n   ```\n\n'
        f'2. Run the same command:\n\n   ```sh\n   {shown}\n   ```\n\n'
        f'3. Check a bundle (hashes, verdicts recomputed from the results, completeness against the rule catalog):\n\n'
        f'   ```sh\n   workspace-conformance verify {directory.name}\n   ```\n'
    )
    (directory / CHECKSUMS).write_text(checksums(directory))
