"""The mutant gallery: backends correct but for one broken clause, each declaring the rules it must fail."""
