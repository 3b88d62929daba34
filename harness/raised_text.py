"""How an exception the submission raised is told, as text: the header line before its frames
and a frame's first line. Read by the worker's side (:mod:`sandbox.student_errors`), by
:mod:`harness.raised` in the test run and by the grader's feedback, which imports no pytest
(a grading's ``grade`` process imported pytest for these three lines alone: 0.2 s of CPU)."""

from __future__ import annotations

import re

MAX_FRAMES = 6  # the innermost frames told, as many as the isolated worker tells
HEADER = "your code raised {} (innermost call last):"  # the line before the frames, the exception's class named
HEADER_LINE = re.compile(r"your code raised [\w.]+ \(innermost call last\):")
FRAME_LINE = re.compile(r'File "(?P<path>[^"]*)", line \d+, in .*')  # a frame's first line (traceback.format_list's, unindented)
