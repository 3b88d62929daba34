"""``python -m grader handout --gradescope OUT.zip``: Gradescope's autograder zip
(``setup.sh``, ``run_autograder`` and everything grading needs: harness, sandbox, grader,
the full suite, reference, fixtures). ``setup.sh`` installs the pinned versions of
``grading.lock``: the environment does not change under a course mid-semester."""

from __future__ import annotations

import dataclasses
import shlex
import stat
import zipfile
from pathlib import Path

from harness import ROOT
from .exports import LOCK, PYTHON_VERSION, locked, python_version, render
from .policies import NAMED_POLICIES
from .request import GradeRequest

# run_autograder's grading, its words shell variables of the script: the copied submission and
# the results file Gradescope reads, by the policy the bundle was exported with (a file of the
# bundle, named relative to the folder it grades in; grading.yaml unless `handout --config`
# named another): never the one the upload's layout would choose, so that an upload laid out
# like a CS336 repository is not graded by CS336's contract, where Parts 1-3 count for nothing.
# The script adds `--config "$AUTOGRADER_CONFIG"` when that is set (a policy file or name): it wins
AUTOGRADER_REQUEST = GradeRequest(submission=Path("$WORK"), results=Path("$RESULTS/results.json"), config=NAMED_POLICIES["default"])


def shell_command(argv: list[str]) -> str:
    """``argv`` as a line of a bash script: a word with a ``$`` in double quotes, so that its
    variables expand (and it stays one word), the others as they are (they are plain)."""
    return " ".join(f'"{word}"' if "$" in word else shlex.quote(word) for word in argv)


def gradescope_files(root: Path = ROOT, python: str = PYTHON_VERSION, policy: str = NAMED_POLICIES["default"]) -> dict[str, str]:
    """The generated scripts of the autograder zip; ``setup.sh`` makes its venv with a Python
    ``python`` or newer (``handout --python``: CS336's 2026 starter asks for 3.12);
    ``run_autograder`` grades by ``policy``, the name of a policy file of the bundle."""
    deps = " ".join(shlex.quote(d) for d in locked(root))
    major, minor = python_version(python)
    request = dataclasses.replace(AUTOGRADER_REQUEST, config=policy)
    return {
        "setup.sh": render("setup.sh", dependencies=deps, python=f"{major}.{minor}", python_tuple=f"{major}, {minor}"),
        "run_autograder": render("run_autograder", grade_command=shell_command(request.argv(python="$PY"))),
    }


def export_gradescope(zip_path: Path, root: Path = ROOT, python: str = PYTHON_VERSION, policy: Path | None = None) -> list[str]:
    """Write Gradescope's autograder zip (bundling ``root``'s policies, grading.yaml and
    grading-cs336.yaml, and ``policy``, the one it grades by, at its file name: default
    ``root``'s grading.yaml; the caller has loaded them: a broken policy is never bundled);
    returns its member names."""
    policy = Path(policy) if policy is not None else root / NAMED_POLICIES["default"]
    members: dict[str, Path | str] = dict(gradescope_files(root, python, policy.name))
    # mutants/ (when present) lets failures say "this matches a known bug" on Gradescope too
    for top in ("harness", "sandbox", "grader", "tests", "reference", "fixtures", "student", "mutants"):
        for path in sorted((root / top).rglob("*")) if (root / top).is_dir() else []:
            rel = path.relative_to(root)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc" and ".hypothesis" not in rel.parts:
                members[rel.as_posix()] = path
    for name in ("adapters.py", *NAMED_POLICIES.values(), "pyproject.toml", LOCK):
        members[name] = root / name
    members[policy.name] = policy
    zip_path = Path(zip_path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = zip_path.with_name(zip_path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, src in sorted(members.items()):
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            executable = name in ("setup.sh", "run_autograder")
            info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            data = src.encode("utf-8") if isinstance(src, str) else src.read_bytes()
            zf.writestr(info, data)
    tmp.replace(zip_path)
    return sorted(members)
