"""The rule engine beneath `authoring`: rule metadata, guards, requirements, tracing, batching and its pytest hooks.

Nothing here imports a suite: the suites' area modules stand on `workspace_conformance.authoring`, which publishes
what a rule body needs from this package.
"""
