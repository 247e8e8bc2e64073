"""Fixtures of the execution tests: a real SLURM on loopback (`slurm_cluster`)."""

from .slurm_cluster import slurm, slurm_session  # noqa: F401 - fixtures
