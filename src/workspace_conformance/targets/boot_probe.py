"""`python -m workspace_conformance.targets.boot_probe NAME`: boot one test VM of `boxlite` or `smol`; record it.

ci/services/boxlite.sh and smol.sh run it from `up`; the target's `missing()` reads the record it writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .microvm import BOOT_PROBE_FILE, PROBE_TIMEOUT, boot_record_path, probe_boot


def main(argv: list[str] | None = None) -> int:
    """`NAME [--rootfs DIR] [--record FILE]`: boot a test VM, print the outcome, write the record."""
    parser = argparse.ArgumentParser(prog='python -m workspace_conformance.targets.boot_probe')
    parser.add_argument('name', choices=['boxlite', 'smol'])
    parser.add_argument('--rootfs', help='local OCI layout a BoxLite box boots')
    parser.add_argument('--timeout', type=float, default=PROBE_TIMEOUT)
    parser.add_argument('--record', help=f'where to write the record (default $WC_SERVICES/NAME/{BOOT_PROBE_FILE})')
    args = parser.parse_args(argv)
    options = {'rootfs': args.rootfs} if args.rootfs else {}
    record = probe_boot(args.name, options, args.timeout)
    path = Path(args.record) if args.record else boot_record_path(args.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + '\n', encoding='utf-8')
    outcome = 'boots' if record['booted'] else f'does not boot: {record["reason"]}'
    sys.stdout.write(f'{args.name}: the micro-VM {outcome} ({record["seconds"]} s; recorded in {path})\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
