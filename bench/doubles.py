"""Throughput of InMemoryBackend against LocalWorkspaceBackend on one fixed, seeded workload.

10,000 mixed file operations (write, read, stat, exists, list_dir, make_dir, remove) chosen by
`random.Random(SEED)`, identical for both backends, each run ROUNDS times on a fresh backend; the median
round counts. Prints ops/s of each; the last line is the ratio.
Usage: python bench/doubles.py [--operations N]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from pydantic_ai.workspaces import LocalWorkspaceBackend

from workspace_conformance.doubles import InMemoryBackend

SEED = 20261129
KINDS = ('write', 'write', 'read', 'read', 'stat', 'exists', 'list', 'mkdir', 'remove')


def workload(count: int) -> list[tuple[str, int, int]]:
    """(operation, directory index, file index) triples: the same sequence for every backend."""
    chooser = random.Random(SEED)
    return [(chooser.choice(KINDS), chooser.randrange(8), chooser.randrange(32)) for _ in range(count)]


async def run(backend: Any, root: str, steps: list[tuple[str, int, int]]) -> float:
    payload = bytes(range(256)) * 4
    started = time.perf_counter()
    for kind, directory, file in steps:
        folder = f'{root}/d{directory}'
        path = f'{folder}/f{file}'
        try:
            if kind == 'write':
                await backend.write_bytes(path, payload)
            elif kind == 'read':
                await backend.read_bytes(path)
            elif kind == 'stat':
                await backend.stat(path)
            elif kind == 'exists':
                await backend.exists(path)
            elif kind == 'list':
                await backend.list_dir(folder)
            elif kind == 'mkdir':
                await backend.make_dir(f'{folder}/sub{file}')
            else:
                await backend.remove(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            pass  # the workload is random: a missing file is part of it
    return time.perf_counter() - started


ROUNDS = 5


def measure(name: str, job: Callable[[], Coroutine[Any, Any, float]], count: int) -> float:
    rounds = sorted(anyio.run(job) for _ in range(ROUNDS))
    elapsed = rounds[ROUNDS // 2]
    rate = count / elapsed
    spread = f'{rounds[0]:.3f}-{rounds[-1]:.3f}'
    print(f'{name:<22} {count} operations: median {elapsed:7.3f} s ({spread}) = {rate:10.0f} ops/s')
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--operations', type=int, default=10_000)
    count = parser.parse_args().operations
    steps = workload(count)
    memory = measure('InMemoryBackend', lambda: run(InMemoryBackend(), '/workspace/bench', steps), count)

    async def local_round() -> float:
        with tempfile.TemporaryDirectory() as directory:
            return await run(LocalWorkspaceBackend(directory), f'{directory}/bench', steps)

    local = measure('LocalWorkspaceBackend', local_round, count)
    print(f'ratio in-memory / local: {memory / local:.1f}x')


if __name__ == '__main__':
    main()
