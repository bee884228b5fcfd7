"""Reports of a conformance run: the pytest plugin that records outcomes, the models, the verdict."""
