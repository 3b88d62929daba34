"""The packages a submission declares (pyproject.toml, requirements.txt, uv.lock) and
``grade --install-declared`` (policy key ``install_declared``): without it, a declared package
the grading environment lacks is named as declared and the code using it loses its points;
with it, the package is installed for the grading only (wheels, at the lock's version, never
torch), the code scores full marks, the notes name what was installed, and nothing is left.

No network: every wheel is built here (a valid pure-Python wheel: METADATA, WHEEL, RECORD) and
pip reads only that folder (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``; ``PIP_CONFIG_FILE`` at
``os.devnull`` keeps the machine's own pip configuration out)."""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from grader.declared import canonical, declared, declared_among, locked, not_installed
from grader.install import NEVER_INSTALLED, declared_packages, never_installed

from .support import build_layout, run_grade

TRAIN = "tests/cs336/test_cs336_contract.py::test_hand_worked_merges_with_a_special_token_given"
PTH_MARK = "BPE_SELFTEST_PTH_RAN"  # set by a .pth file in tinydep's wheel, if anything processed it


def make_wheel(folder: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A valid pure-Python wheel of ``name`` ``version`` holding ``files`` (path -> text)."""
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    members = {**files, f"{info}/METADATA": meta,
               f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: selftest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
                     f"{len(text.encode())}\n" for path, text in members.items()) + f"{info}/RECORD,,\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in {**members, f"{info}/RECORD": record}.items():
            zf.writestr(member, text)
    return path


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    """tinydep 1.0 (``step(n)`` is ``n``) and 2.0 (``n + 1``: wrong for the submission, so only
    the lock's 1.0 scores), needstorch (requires torch) and a torch that breaks any import."""
    folder = tmp_path_factory.mktemp("wheels")
    for version, body in (("1.0", "n"), ("2.0", "n + 1")):
        make_wheel(folder, "tinydep", version, {
            "tinydep/__init__.py": f"def step(n):\n    return {body}\n",
            "tinydep_hook.pth": f"import os; os.environ['{PTH_MARK}'] = '1'\n",  # a site directory would run this
        })
    make_wheel(folder, "needstorch", "1.0", {"needstorch/__init__.py": "import torch\n"}, requires=("torch",))
    make_wheel(folder, "torch", "9.9", {"torch/__init__.py": "raise ImportError('the selftest torch was installed')\n"})
    return folder


def pip_env(links: Path) -> dict[str, str]:
    """This environment with pip reading only ``links``."""
    return {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(links), "PIP_CONFIG_FILE": os.devnull}


LOCK = '''version = 1
requires-python = ">=3.11"

[[package]]
name = "tinydep"
version = "1.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "cs336-basics"
version = "1.0.6"
source = { editable = "." }
'''


def submission(dest: Path, lock: bool = True) -> Path:
    """The CS336-layout reference, declaring tinydep (pinned to 1.0 by its uv.lock), needstorch
    and torch; its run_train_bpe uses tinydep and fails if a .pth file of tinydep's ran."""
    sub = build_layout("cs336", dest)
    pyproject = sub / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    start = text.index("dependencies = [")
    pyproject.write_text(text[:start] + 'dependencies = ["tinydep", "needstorch", "torch"]' + text[text.index("]", start) + 1:],
                         encoding="utf-8")
    if lock:
        (sub / "uv.lock").write_text(LOCK, encoding="utf-8")
    adapters = sub / "tests" / "adapters.py"
    text = adapters.read_text(encoding="utf-8").replace("import torch\n", "import torch\nimport tinydep\n", 1)
    old = "    return train_bpe(input_path, vocab_size, special_tokens)"
    assert old in text
    adapters.write_text(text.replace(old, f"    if os.environ.get({PTH_MARK!r}):\n        raise RuntimeError('a .pth file ran')\n"
                                          "    return train_bpe(input_path, tinydep.step(vocab_size), special_tokens)"), encoding="utf-8")
    return sub


# -- what a submission declares -------------------------------------------------------------


def test_declared_requirements_are_read_from_pyproject_and_requirements_txt_never_their_options(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["Rich>=13", "hydra_core[extra]", '
                                             '"winonly; sys_platform == \'win32\'", "remote @ https://example.com/r.whl"]\n')
    (tmp_path / "requirements.txt").write_text("# comment\n--index-url https://evil.example/simple\n-r other.txt\n"
                                               "-e .\n./local\nsortedcontainers==2.4.0  # pinned\nrich\n")
    assert [(d.name, d.source) for d in declared(tmp_path)] == [
        ("rich", "pyproject.toml"), ("hydra-core", "pyproject.toml"), ("sortedcontainers", "requirements.txt")]


@pytest.mark.parametrize("text", ["not toml [", '[project]\ndependencies = "rich"\n', "[tool.x]\n", ""],
                         ids=["invalid", "not-a-list", "no-project", "empty"])
def test_a_pyproject_declaring_nothing_readable_declares_nothing(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    assert declared(tmp_path) == []


def test_the_lock_pins_registry_packages_with_one_version_and_a_valid_name_only(tmp_path):
    (tmp_path / "uv.lock").write_text(LOCK + '\n[[package]]\nname = "Two_Ways"\nversion = "1"\nsource = { registry = "r" }\n'
                                      '\n[[package]]\nname = "two-ways"\nversion = "2"\nsource = { registry = "r" }\n'
                                      '\n[[package]]\nname = "odd"\nversion = "1; rm -rf /"\nsource = { registry = "r" }\n'
                                      '\n[[package]]\nname = "-i http://localhost:8000/simple #"\nversion = "1"\nsource = { registry = "r" }\n')
    assert locked(tmp_path) == {"tinydep": "1.0"}


def test_a_locked_package_the_source_imports_counts_as_declared_at_its_locked_version(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["hydra-core"]\n')
    (tmp_path / "uv.lock").write_text(LOCK.replace("tinydep", "omegaconf") + LOCK.split("\n\n", 1)[1].replace("tinydep", "unused"))
    (tmp_path / "log.py").write_text("from omegaconf import OmegaConf\nimport hydra\n")
    assert [(d.name, d.requirement, d.source) for d in declared(tmp_path)] == [
        ("hydra-core", "hydra-core", "pyproject.toml"), ("omegaconf", "omegaconf==1.0", "uv.lock")]


def test_not_installed_names_only_what_this_environment_lacks(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["pytest", "PyYAML", "tinydep"]\n')
    assert [d.name for d in not_installed(tmp_path)] == ["tinydep"]


def test_a_module_counts_as_declared_directly_or_through_the_lock(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["rich"]\n')
    (tmp_path / "uv.lock").write_text(LOCK.replace("tinydep", "omegaconf"))
    (tmp_path / "log.py").write_text("import numpy, omegaconf, rich\n")
    assert declared_among(tmp_path, ["rich", "omegaconf", "numpy"]) == ["rich", "omegaconf"]


@pytest.mark.parametrize("name", ["torch", "Torch", "nvidia-cublas-cu12", "nvidia_cudnn_cu12", "triton", "jax", "jaxlib",
                                  "tensorflow", "tensorflow-cpu"])
def test_torch_and_the_gpu_stack_are_never_installed(name):
    assert never_installed(name) == "a stand-in by design", NEVER_INSTALLED


def test_a_forbidden_module_is_never_installed_and_an_ordinary_package_may_be():
    assert never_installed("tokenizers", ("tiktoken", "tokenizers")) == "forbidden"
    assert never_installed("rich", ("tiktoken", "tokenizers")) is None


# -- installing, on the trusted side --------------------------------------------------------


def test_installing_pins_the_lock_drops_torch_and_removes_everything_after(tmp_path, wheels, monkeypatch):
    for k, v in pip_env(wheels).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    sub = submission(tmp_path / "sub")
    with declared_packages(sub) as done:
        site = done.path
        assert site is not None and (site / "tinydep" / "__init__.py").read_text() == "def step(n):\n    return n\n"
        assert dict(done.installed) == {"tinydep": "1.0", "needstorch": "1.0"}
        assert done.modules == ("needstorch", "tinydep")
        assert not (site / "torch").exists()
        assert any("tinydep 1.0" in n and "uv.lock" in n for n in done.notes), done.notes
        assert any("torch (a stand-in by design)" in n for n in done.notes), done.notes
    assert not site.exists() and os.listdir(tmp_path / "tmp") == []


def test_without_a_lock_pip_chooses_the_newest_wheel(tmp_path, wheels, monkeypatch):
    for k, v in pip_env(wheels).items():
        monkeypatch.setenv(k, v)
    with declared_packages(submission(tmp_path / "sub", lock=False)) as done:
        assert dict(done.installed)["tinydep"] == "2.0"


def test_a_failing_install_is_one_note_line_and_installs_nothing(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    for k, v in pip_env(tmp_path / "empty").items():
        monkeypatch.setenv(k, v)
    with declared_packages(submission(tmp_path / "sub")) as done:
        assert done.path is None and done.installed == ()
    failed = [n for n in done.notes if "could not be installed" in n]
    assert len(failed) == 1 and "\n" not in failed[0] and "tinydep" in failed[0] and "stand-ins" in failed[0], done.notes


@pytest.mark.parametrize("lacks", [True, False], ids=["lacking_some", "lacking_none"])
def test_the_user_is_told_of_an_install_only_when_there_is_one_to_do(tmp_path, monkeypatch, lacks):
    (tmp_path / "empty").mkdir()
    for k, v in pip_env(tmp_path / "empty").items():
        monkeypatch.setenv(k, v)
    sub = submission(tmp_path / "sub", lock=lacks)
    if not lacks:
        (sub / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["regex", "torch"]\n')
    said: list[str] = []
    with declared_packages(sub, say=said.append):
        pass
    assert [("installing" in line, "tinydep" in line) for line in said] == ([(True, True)] if lacks else [])


def test_a_declared_package_without_a_wheel_costs_only_itself(tmp_path, wheels, monkeypatch):
    for k, v in pip_env(wheels).items():
        monkeypatch.setenv(k, v)
    sub = submission(tmp_path / "sub")
    pyproject = sub / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace('"tinydep", ', '"tinydep", "nowheel", '), encoding="utf-8")
    with declared_packages(sub) as done:
        assert dict(done.installed) == {"tinydep": "1.0", "needstorch": "1.0"}
    failed = [n for n in done.notes if "could not be installed" in n]
    assert len(failed) == 1 and failed[0].startswith("of the packages the submission declares, nowheel could not"), done.notes


def test_a_slow_install_stops_at_its_deadline_as_one_note_line(tmp_path, wheels, monkeypatch):
    for k, v in pip_env(wheels).items():
        monkeypatch.setenv(k, v)
    with declared_packages(submission(tmp_path / "sub"), seconds=0.05) as done:
        assert done.path is None
    assert any("could not be installed" in n and " s" in n for n in done.notes), done.notes


def test_a_package_installed_for_the_grading_is_never_named_as_missing(tmp_path):
    from grader.intake import submission_notes
    from grader.request import GradeRequest

    sub = build_layout("cs336", tmp_path / "sub")
    (sub / "cs336_basics" / "optional.py").write_text("try:\n    import tinydep\nexcept ImportError:\n    tinydep = None\n")
    unmet = "imported by the submission only inside try/except ImportError"

    def named(provided: tuple[str, ...]) -> bool:
        return any(unmet in n and "tinydep" in n for n in submission_notes(GradeRequest(submission=sub), {}, True, provided))

    assert named(()) and not named(("tinydep",))


# -- grading --------------------------------------------------------------------------------


def _notes(run) -> str:
    return run.results.get("output", "")


def test_without_installing_a_declared_package_is_named_and_its_code_loses_points(tmp_path, wheels):
    run = run_grade(tmp_path / "out", submission=submission(tmp_path / "sub"), isolate=False, tests=[TRAIN],
                    env=pip_env(wheels), install_declared=False)
    assert run.code == 0, run.context()
    got, most = run.group_points()["train_bpe"]
    assert most > 0 and got < most, run.context()
    assert "tinydep: declared by the submission" in _notes(run) and "grade --install-declared" in _notes(run), run.context()
    assert "installed for this grading" not in _notes(run), run.context()


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "in-process"])
def test_installing_declared_packages_gives_full_marks_and_names_their_versions(tmp_path, wheels, isolate):
    # the CS336 policy installs by itself (install_declared: true); the lock pins tinydep 1.0
    # (2.0 would fail), the fake torch breaks any import (never installed), tinydep's .pth file
    # would fail training (the folder is no site directory), and nothing is left in TMPDIR
    run = run_grade(tmp_path / "out", submission=submission(tmp_path / "sub"), isolate=None if isolate else False,
                    tests=[TRAIN], env=pip_env(wheels), install_declared=None, private_tmp=True)
    assert run.code == 0, run.context()
    got, most = run.group_points()["train_bpe"]
    assert most > 0 and got == pytest.approx(most), run.context()
    assert "installed for this grading, as the submission declares (pinned by its uv.lock): " in _notes(run), run.context()
    assert "tinydep 1.0" in _notes(run) and "torch (a stand-in by design)" in _notes(run), run.context()
    assert run.left == [], f"left in TMPDIR: {run.left}"


def test_a_failing_install_is_one_note_line_and_grading_goes_on_with_stand_ins(tmp_path):
    (tmp_path / "empty").mkdir()
    run = run_grade(tmp_path / "out", submission=submission(tmp_path / "sub"), isolate=False, tests=[TRAIN],
                    env=pip_env(tmp_path / "empty"), install_declared=True, private_tmp=True)
    assert run.code == 0 and "Traceback" not in run.stdout + run.stderr, run.context()
    lines = [ln for ln in _notes(run).split("; the packages the submission declares")[1:]]
    assert len(lines) == 1 and "could not be installed" in lines[0], run.context()
    got, most = run.group_points()["train_bpe"]
    assert got < most, run.context()
    assert run.left == [], f"left in TMPDIR: {run.left}"


def test_the_worker_gets_the_installed_folder_last_on_its_path_and_shown_read_only(tmp_path):
    # a plain sys.path entry (the worker never makes one a site directory: tinydep's .pth file
    # would fail the isolated grading above), after the environment's own, so an installed
    # package always wins; the reference's worker never gets it
    from sandbox.backend import WorkerBackend

    (tmp_path / "site").mkdir()
    sub = build_layout("cs336", tmp_path / "sub")
    with_packages, without = WorkerBackend("student", sub, packages=tmp_path / "site"), WorkerBackend("student", sub)
    try:
        path, dirs = with_packages.python()
        assert path[-1] == str((tmp_path / "site").resolve()) and str((tmp_path / "site").resolve()) in dirs
        assert path[:-1] == without.python()[0]
    finally:
        with_packages.close()
        without.close()
