"""How a submission folder is read and copied (harness.submission): layouts, links, limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import submission as S
from harness.impl import ROOT


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("files, kind, adapters, packages", [
    ({"adapters.py": "", "student/__init__.py": ""}, "stubs", "adapters.py", ("student",)),
    ({"adapters.py": "", "mycode/__init__.py": "", "notes/readme.txt": ""}, "own package", "adapters.py", ("mycode",)),
    ({"adapters.py": ""}, "adapters only", "adapters.py", ()),
    ({"tests/adapters.py": "", "tests/__init__.py": "", "cs336_basics/__init__.py": ""}, "CS336", "tests/adapters.py",
     ("cs336_basics",)),
    ({"adapters.py": "", "tests/adapters.py": "", "student/x.py": ""}, "stubs", "adapters.py", ("student",)),
])
def test_the_layout_is_told_by_where_adapters_py_is(tmp_path, files, kind, adapters, packages):
    layout = S.detect_layout(tree(tmp_path, files))
    assert (layout.kind, layout.adapters, layout.packages) == (kind, adapters, packages)
    assert layout.describe().startswith(f"{kind} layout ({adapters}")


def test_no_adapters_file_is_no_layout(tmp_path):
    assert S.detect_layout(tree(tmp_path, {"student/__init__.py": "", "README.md": ""})) is None


def test_an_adapters_file_that_is_a_link_does_not_count(tmp_path):
    tree(tmp_path, {"real/adapters.py": ""})
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "adapters.py").symlink_to(tmp_path / "real" / "adapters.py")
    assert S.detect_layout(tmp_path / "sub") is None


def copied(dest: Path) -> dict[str, str]:
    out = {}
    for path in sorted(dest.rglob("*")):
        rel = str(path.relative_to(dest))
        out[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else ("/" if path.is_dir() else path.read_text())
    return out


def test_caches_version_control_and_virtual_environments_are_left_out(tmp_path):
    src = tree(tmp_path / "src", {
        "adapters.py": "A", "pkg/m.py": "M", ".git/config": "", "pkg/__pycache__/m.pyc": "", ".venv/bin/python": "",
        "myenv/pyvenv.cfg": "", "myenv/lib/x.py": "", "node_modules/x.js": "", "pkg.egg-info/PKG-INFO": "",
        ".hypothesis/unicode_data/14.0.0/charmap.json.gz": "",
    })
    S.copy_submission(src, tmp_path / "dest")
    assert copied(tmp_path / "dest") == {"adapters.py": "A", "pkg": "/", "pkg/m.py": "M"}


def test_links_inside_are_kept_and_links_outside_are_left_out_with_a_note(tmp_path):
    src = tree(tmp_path / "src", {"adapters.py": "A", "src/student/m.py": "M", "outside_file": "secret"})
    tree(tmp_path, {"secret.txt": "S"})
    (src / "student").symlink_to("src/student", target_is_directory=True)  # inside: kept
    (src / "alias.py").symlink_to(src / "adapters.py")  # inside, absolute: kept, made relative
    (src / "reference").symlink_to(ROOT / "reference", target_is_directory=True)  # outside: left out
    (src / "secret.txt").symlink_to(tmp_path / "secret.txt")
    (src / "chain").symlink_to("reference")  # resolves outside through another link
    (src / "dangling").symlink_to("nowhere")
    (src / "loop").symlink_to("loop")
    found = S.copy_submission(src, tmp_path / "dest")
    got = copied(tmp_path / "dest")
    assert got["student"] == "-> src/student" and got["alias.py"] == "-> adapters.py"
    assert (tmp_path / "dest" / "student" / "m.py").read_text() == "M"
    for name in ("reference", "secret.txt", "chain", "dangling", "loop"):
        assert name not in got
    notes = "\n".join(found.left_out)
    for name in ("reference", "secret.txt", "chain"):
        assert f"{name}: a symbolic link to outside the submission, left out" in notes


def test_hard_links_are_copied_only_when_every_link_is_inside(tmp_path):
    src = tree(tmp_path / "src", {"adapters.py": "A", "student/a.py": "inside"})
    os.link(src / "student" / "a.py", src / "student" / "b.py")  # both names inside: copied, separately
    tree(tmp_path, {"harness/reference.py": "the solution"})
    try:
        os.link(tmp_path / "harness" / "reference.py", src / "student" / "c.py")
    except OSError as err:  # pragma: no cover - a file system without hard links
        pytest.skip(f"no hard links here: {err}")
    found = S.copy_submission(src, tmp_path / "dest")
    dest = tmp_path / "dest" / "student"
    assert (dest / "a.py").read_text() == (dest / "b.py").read_text() == "inside"
    assert os.stat(dest / "a.py").st_nlink == 1 and os.stat(dest / "a.py").st_ino != os.stat(src / "student" / "a.py").st_ino
    assert not (dest / "c.py").exists()
    assert "student/c.py: a hard link to a file outside the submission, left out" in found.left_out


def test_a_deep_tree_is_cut_with_one_note_and_the_rest_is_copied(tmp_path):
    src = tree(tmp_path / "src", {"adapters.py": "A"})
    deep = src
    for _ in range(S.MAX_DEPTH + 20):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "x.py").write_text("")
    found = S.copy_submission(src, tmp_path / "dest")
    assert (tmp_path / "dest" / "adapters.py").is_file()
    assert len(found.left_out) == 1 and f"nested more than {S.MAX_DEPTH} deep" in found.left_out[0]


def test_too_many_files_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "MAX_FILES", 20)
    src = tree(tmp_path / "src", {f"pkg/m{i}.py": "" for i in range(30)})
    with pytest.raises(S.SubmissionError, match="more than 20 files and folders"):
        S.scan(src)


def test_oversized_files_are_left_out_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "MAX_FILE_BYTES", 10)
    src = tree(tmp_path / "src", {"adapters.py": "A", "data/big.txt": "x" * 100})
    found = S.copy_submission(src, tmp_path / "dest")
    assert not (tmp_path / "dest" / "data" / "big.txt").exists()
    assert found.notes == ["data/big.txt: 100 bytes, more than 10, left out"]


def test_notes_name_a_few_and_count_the_rest(tmp_path):
    src = tree(tmp_path / "src", {"adapters.py": "A"})
    for i in range(S.NOTES_SHOWN + 3):
        (src / f"l{i}").symlink_to("/etc/passwd")
    assert S.scan(src).notes[-1] == "and 3 more left out"


def test_the_harness_own_files_are_copied_whatever_links_to_them(tmp_path):
    # a submission (or anyone) hard-linking the reference must not take it from the reference's own worker
    src = tree(tmp_path / "harness", {"adapters.py": "A", "reference/tokenizer.py": "solution"})
    os.link(src / "reference" / "tokenizer.py", tmp_path / "a_link_elsewhere.py")
    S.copy_submission(src, tmp_path / "dest", only=("reference", "adapters.py"))
    assert (tmp_path / "dest" / "reference" / "tokenizer.py").read_text() == "solution"


def test_a_folder_named_outside_is_left_out_with_a_note_wherever_it_lies(tmp_path):
    """The grader's TMPDIR inside a submission (other workers' sandboxes, the grading's files)
    is not the submission's: left out of the copy, and said."""
    src = tree(tmp_path / "src", {"adapters.py": "A", "build/tmp/bpe-grade-x/report.json": "{}", "build/keep.py": "K"})
    found = S.copy_submission(src, tmp_path / "dest", outside=(src / "build" / "tmp",))
    assert copied(tmp_path / "dest") == {"adapters.py": "A", "build": "/", "build/keep.py": "K"}
    assert found.notes == ["build/tmp: the grader's temporary folder (TMPDIR), left out"]
