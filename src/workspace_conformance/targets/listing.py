"""What `workspace-conformance targets` prints, and the record a target that could not run leaves behind."""

from __future__ import annotations

import json
from pathlib import Path

from .registry import TargetStatus

__all__ = ('NOT_RUN_FILE', 'render_targets', 'write_not_run')

NOT_RUN_FILE = 'not-run.json'


def render_targets(statuses: list[TargetStatus], format: str) -> str:
    """Each target with `ready` or `not run: <why>`, and its options, as a table or JSON."""
    if format == 'json':
        rows = [
            {
                'target': status.target.name,
                'runnable': status.runnable,
                'missing': status.missing,
                'description': status.target.description,
                'options': {option.name: option.help for option in status.target.options},
            }
            for status in statuses
        ]
        return json.dumps(rows, indent=2) + '\n'
    width = max(len(status.target.name) for status in statuses)
    lines = []
    for status in statuses:
        state = 'ready' if status.runnable else f'not run: {status.missing}'
        lines.append(f'{status.target.name:<{width}}  {state}')
        lines.append(f'{"":<{width}}  {status.target.description}')
        for option in status.target.options:
            lines.append(f'{"":<{width}}    --{option.name}: {option.help}')
    return '\n'.join(lines) + '\n'


def write_not_run(directory: Path, target: str, reason: str) -> None:
    """Write `not-run.json` (target, reason) to `directory`, so a matrix shows the target as not run, never passed."""
    directory.mkdir(parents=True, exist_ok=True)
    record = {'target': target, 'verdict': 'not run', 'reason': reason}
    (directory / NOT_RUN_FILE).write_text(json.dumps(record, indent=2) + '\n', encoding='utf-8')
