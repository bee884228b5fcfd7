"""The refs of every environment a run created, kept in its scratch directory so cleanup can destroy them."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceRef

__all__ = ('LEDGER_NAME', 'read_refs', 'record_ref')

LEDGER_NAME = 'refs.jsonl'


def record_ref(run_root: Path, ref: WorkspaceRef | None) -> None:
    """Append `ref` to the run's ledger (one JSON line; appends from several workers stay whole lines)."""
    if ref is None:
        return
    run_root.mkdir(parents=True, exist_ok=True)
    line = json.dumps({'provider': ref.provider, 'id': ref.id}) + '\n'
    with (run_root / LEDGER_NAME).open('a', encoding='utf-8') as ledger:
        ledger.write(line)


def read_refs(run_root: Path) -> list[WorkspaceRef]:
    """Every distinct ref recorded under `run_root`, in the order first recorded."""
    path = run_root / LEDGER_NAME
    if not path.exists():
        return []
    refs: dict[tuple[str, str], WorkspaceRef] = {}
    for line in path.read_text(encoding='utf-8').splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        refs.setdefault((data['provider'], data['id']), WorkspaceRef(provider=data['provider'], id=data['id']))
    return list(refs.values())
