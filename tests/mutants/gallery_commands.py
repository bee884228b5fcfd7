"""Mutants for the rules added in 0.2.0 (gallery_commands)."""

from __future__ import annotations
