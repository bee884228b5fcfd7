"""Mutants for the rules added in 0.2.0 (gallery_files)."""

from __future__ import annotations
