"""Honest code (the reference) in a submission holding files with odd names: a newline, bytes
that are not UTF-8, a name of 255 bytes, a leading dash, quotes and spaces, backslashes and
dots, and links to outside named with a newline or bytes that are not UTF-8 (made by ODD_NAMES
and ODD_LINKS in test_attacks.py: git cannot hold all of them). Grading must copy,
load and report it as usual, with full marks."""
from student.base_adapters import *  # noqa: F401,F403
