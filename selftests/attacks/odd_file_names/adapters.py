"""Honest code (the reference) in a submission holding files with odd names: a newline, bytes
that are not UTF-8, a name of 255 bytes, a leading dash, quotes and spaces, backslashes and
dots (made by ODD_NAMES in test_attacks.py: git cannot hold all of them). Grading must copy,
load and report it as usual, with full marks."""
from student.base_adapters import *  # noqa: F401,F403
