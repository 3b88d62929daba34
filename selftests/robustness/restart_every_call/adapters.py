"""Every pair count kills its worker, so each call starts a fresh one (and takes a user id)."""
import os

from student.base_adapters import *  # noqa: F401,F403


def run_get_pair_counts(ids):
    os._exit(3)
