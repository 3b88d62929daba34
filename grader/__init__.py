"""The instructor-side grader: ``python -m grader`` (grade, compare, batch, handout).

It reads ``grading.yaml`` (:mod:`grader.config`), runs the suite with the grading plugin
(:mod:`grader.grading_plugin`) over the sandbox (``sandbox``) and turns the report into
results files (:mod:`grader.scoring`, :mod:`grader.formats`). Nothing in ``harness`` or ``sandbox`` imports it.
"""
