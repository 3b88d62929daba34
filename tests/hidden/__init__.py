"""The hidden part of the graded suite (never in the student handout)."""

HIDDEN_FILES = ["hidden/mixed.txt", "hidden/stories_hidden.txt"]  # fixtures only grading uses
