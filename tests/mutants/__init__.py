"""The mutant gate: the gallery of mutants (`gallery/`), how one is declared (`registry`), the gate that runs them."""
