"""Write src/workspace_conformance/mutant_counts.json (rule id -> mutants proving it) from tests/mutants.

`--check` exits 1 when the shipped file is stale instead. The counts are shipped so that `workspace-conformance
rules` can show how each rule is proven without the project's tests installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNTS = ROOT / 'src' / 'workspace_conformance' / 'mutant_counts.json'


def counts() -> dict[str, int]:
    sys.path.insert(0, str(ROOT))
    from tests.mutants.gallery import load_all, load_capability_mutants, load_isolation_mutants, load_tool_mutants

    from workspace_conformance import capability_rules, isolation_rules, rules, tool_rules

    mutants = load_all()
    counts = {rule.id: sum(rule.id in mutant.kills for mutant in mutants) for rule in rules()}
    capability_mutants = load_capability_mutants()
    counts.update({rule.id: sum(rule.id in m.kills for m in capability_mutants) for rule in capability_rules()})
    tool_mutants = load_tool_mutants()
    counts.update({rule.id: sum(rule.id in m.kills for m in tool_mutants) for rule in tool_rules()})
    isolation_mutants = load_isolation_mutants()
    counts.update({rule.id: sum(rule.id in m.kills for m in isolation_mutants) for rule in isolation_rules()})
    return counts


def main() -> int:
    text = json.dumps(counts(), indent=2, sort_keys=True) + '\n'
    if '--check' in sys.argv[1:]:
        if not COUNTS.exists() or COUNTS.read_text() != text:
            print(f'{COUNTS} is stale: run python scripts/generate_mutant_counts.py')
            return 1
        return 0
    COUNTS.write_text(text)
    print(f'wrote {COUNTS}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
