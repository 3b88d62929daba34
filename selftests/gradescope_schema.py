"""Gradescope's results.json format, written down from its autograder specification
("Autograder Specifications", section "Output format", with "Output String Formatting",
"Test case status" and "Controlling Test Case Visibility"), and a checker.

Every field the spec lists is here with its type; a field not listed is an error (a typo
would be silently ignored by Gradescope). Values of the enumerated fields are the spec's.
"""

from __future__ import annotations

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
FORMATS = ("text", "html", "simple_format", "md", "ansi")  # output_format, name_format, test_*_format
STATUSES = ("passed", "failed")
NUMBER = "number"  # int or float, never bool

TOP_LEVEL = {
    "score": NUMBER,  # optional if every test has a score; overrides the tests' total
    "execution_time": NUMBER,  # seconds
    "output": str,
    "output_format": FORMATS,
    "test_output_format": FORMATS,  # default output_format of the tests
    "test_name_format": FORMATS,  # default name_format of the tests
    "visibility": VISIBILITIES,
    "stdout_visibility": VISIBILITIES,
    "extra_data": dict,
    "tests": list,
    "leaderboard": list,
}
TEST = {
    "score": NUMBER,
    "max_score": NUMBER,
    "status": STATUSES,  # optional: without it, passed when score >= max_score
    "name": str,
    "name_format": FORMATS,
    "number": str,
    "output": str,
    "output_format": FORMATS,
    "tags": list,
    "visibility": VISIBILITIES,
    "extra_data": dict,
}
LEADERBOARD = {"name": str, "value": (NUMBER, str), "order": ("asc", "desc")}


def _check(value: object, kind: object, where: str) -> list[str]:
    if kind == NUMBER:
        ok = type(value) in (int, float)
    elif isinstance(kind, tuple) and all(isinstance(k, str) for k in kind) and NUMBER not in kind:
        return [] if value in kind else [f"{where}: {value!r} is not one of {', '.join(kind)}"]
    elif isinstance(kind, tuple):
        ok = any(not _check(value, k, where) for k in kind)
    else:
        ok = type(value) is kind
    return [] if ok else [f"{where}: expected {kind if kind == NUMBER else getattr(kind, '__name__', kind)}, got {value!r:.60}"]


def _fields(obj: object, schema: dict, where: str) -> list[str]:
    if not isinstance(obj, dict):
        return [f"{where}: expected an object, got {type(obj).__name__}"]
    problems = [f"{where}: unknown field {key!r}" for key in obj if key not in schema]
    for key, value in obj.items():
        if key in schema:
            problems += _check(value, schema[key], f"{where}.{key}")
    return problems


def problems(results: object) -> list[str]:
    """Every way ``results`` departs from the format: unknown fields, wrong types, values
    outside the allowed ones, a missing score. Empty when it conforms."""
    found = _fields(results, TOP_LEVEL, "results")
    if found and not isinstance(results, dict):
        return found
    tests = results.get("tests", []) if isinstance(results.get("tests", []), list) else []
    for i, test in enumerate(tests):
        found += _fields(test, TEST, f"tests[{i}]")
        if isinstance(test, dict):
            found += [f"tests[{i}].tags[{j}]: expected str, got {t!r}" for j, t in enumerate(test.get("tags", [])) if type(t) is not str]
            if "score" not in test and "score" not in results:
                found.append(f"tests[{i}]: no score here and no top-level score")
    for i, row in enumerate(results.get("leaderboard", []) if isinstance(results.get("leaderboard", []), list) else []):
        found += _fields(row, LEADERBOARD, f"leaderboard[{i}]")
    if "score" not in results and not tests:
        found.append("results: neither a top-level score nor tests")
    return found
