"""``handout OUT --force``: an existing handout is replaced (its ``.git`` kept) once the new one
is built; a folder that is not a handout, or holds the repository, is refused untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.config import load_config
from grader.handout import HandoutError, export_handout, main

ROOT = Path(__file__).resolve().parent.parent
CONFIG = load_config(ROOT / "grading.yaml")
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(autouse=True)
def no_function_search(monkeypatch):
    """The search for working solutions shipped outside student/ (about a minute per export,
    checked by test_handout.py) is not what replacing a folder is about: it finds none here."""
    import grader.handout

    monkeypatch.setattr(grader.handout, "solution_functions", lambda stage: (0, []))


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and ".git" not in p.parts}


def test_force_replaces_an_old_handout_keeping_its_git_and_what_its_links_point_to(tmp_path):
    old = tmp_path / "old"
    export_handout(old, CONFIG)
    fresh = files(old)  # what an export holds, before the edits below
    (old / ".git").mkdir()
    (old / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (old / "student" / "stale.py").write_text("x = 1\n")
    (old / "README.md").write_text("edited\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    (old / "link").symlink_to(outside, target_is_directory=True)
    assert main(old, None, force=True) == 0
    assert files(old) == fresh
    assert (old / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (outside / "keep.txt").read_text() == "keep\n" and not (old / "link").exists()


def test_an_existing_folder_without_force_is_refused_untouched(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine\n")
    assert main(tmp_path, None) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--force" in err and str(tmp_path) in err, err
    assert files(tmp_path) == {"notes.txt": b"mine\n"}


@pytest.mark.parametrize(
    "where, message",
    [("repository", "holds the repository"), ("parent", "holds the repository"), ("staff", "holds reference")],
)
def test_force_refuses_a_folder_that_is_no_handout_and_deletes_nothing(tmp_path, where, message):
    repo = tmp_path / "course" / "repo"  # a stand-in for the repository exported from
    (repo / "reference").mkdir(parents=True)
    (repo / "reference" / "bpe.py").write_text("solution\n")
    staff = tmp_path / "staff"
    (staff / "reference").mkdir(parents=True)
    (staff / "reference" / "bpe.py").write_text("solution\n")
    out = {"repository": repo, "parent": repo.parent, "staff": staff}[where]
    before = files(tmp_path)
    with pytest.raises(HandoutError, match=message):
        export_handout(out, CONFIG, root=repo, force=True)
    assert files(tmp_path) == before
