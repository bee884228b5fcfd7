"""`xdist_group` under pytest 9.2: a marked test goes to its group's one worker again (`--dist loadgroup`).

pytest-xdist 3.8 groups a test by appending `@<group>` to `item._nodeid`, which pytest 9.2 no longer reads (a node's
id is now `item._id`), so every group was spread over the workers: docker certifications ran at once on one engine
and the hostile gallery's tests waited on each other's lock. This plugin appends the suffix where pytest reads it.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker under `--dist loadgroup`, end each grouped test's node id with `@<group>`, as xdist means."""
    if not getattr(config.option, 'loadgroup', False):
        return
    try:
        from _pytest.nodeid import coerce_node_id  # pytest 9.2's structured node ids
    except ImportError:  # an older pytest reads `_nodeid`, where xdist put the suffix
        return

    for item in items:
        groups = sorted(
            {
                str(mark.args[0] if mark.args else mark.kwargs.get('name', 'default'))
                for mark in item.iter_markers('xdist_group')
            }
        )
        suffix = '@' + '_'.join(groups)
        if groups and not item.nodeid.endswith(suffix):
            item._id = coerce_node_id(item.nodeid + suffix)
