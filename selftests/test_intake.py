"""Zips and folders handed in to ``batch``: any oddity of a zip is one line refusing it (no
traceback, no machine path), and staging a submission never touches another student's."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.batch import _stage
from grader.intake import Rejected, Submission, safe_extract, unwrap_submission

ENTRY = st.one_of(
    st.sampled_from([".", "./", "a", "a/", "a/b", "a/./b", "x" * 300, "d/" + "y" * 256, "/abs", "../up", "a\nb", "A"]),
    st.text(min_size=1, max_size=40),
)


def _zip(path: Path, entries: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in entries:
            info = zipfile.ZipInfo(name)
            zf.writestr(info, b"" if name.endswith("/") else b"x = 1\n")
    return path


@given(st.lists(ENTRY, min_size=1, max_size=5))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_zip_is_extracted_or_refused_in_one_line_naming_no_machine_path(tmp_path, entries):
    import shutil
    import warnings

    case = tmp_path / "case"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" is what is being tried
        archive = _zip(case / "sub.zip", entries)
    dest = case / "out"
    try:
        safe_extract(archive, dest)
    except Rejected as err:
        message = str(err)
        assert "\n" not in message and str(case) not in message, message
        assert not dest.exists()
    else:
        assert dest.is_dir()


@pytest.mark.parametrize("entries, says", [
    ([".", "adapters.py"], "names no file"),
    (["adapters.py", "adapters.py"], "twice"),
    (["x" * 300 + ".py"], "longer than 255 bytes"),
])
def test_zip_oddities_are_refused_saying_what(tmp_path, entries, says):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        archive = _zip(tmp_path / "sub.zip", entries)
    with pytest.raises(Rejected, match=says):
        safe_extract(archive, tmp_path / "out")


def test_staging_keeps_a_wrapped_submission_as_handed_in_for_grade_to_unwrap_and_say_so(tmp_path):
    """Student names are letters, digits and ``._@+-``: ``coll`` (a zip of a folder) and
    ``coll.unwrapped`` are both staged from their own files, twice over; ``coll`` keeps its
    one folder, which ``grade`` unwraps and names in its output (staging unwrapped it, and
    batch's logs never said so)."""
    handed = tmp_path / "handed"
    handed.mkdir()
    _zip(handed / "coll.zip", ["coll/adapters.py", "coll/mine_coll.py"])
    _zip(handed / "coll.unwrapped.zip", ["adapters.py", "mine_unwrapped.py"])
    work = tmp_path / "work"
    for _ in range(2):  # a re-run stages again over the first run's folders
        for name in ("coll.unwrapped", "coll"):
            root = _stage(Submission(name, handed / f"{name}.zip"), work / name)
            assert root == work / name
        assert unwrap_submission(work / "coll") == (work / "coll" / "coll", "coll")
        assert sorted(p.name for p in (work / "coll" / "coll").iterdir()) == ["adapters.py", "mine_coll.py"]
        assert sorted(p.name for p in (work / "coll.unwrapped").iterdir()) == ["adapters.py", "mine_unwrapped.py"]


def _link(zf: zipfile.ZipFile, name: str, target: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16  # how zip -y and macOS's Archive Utility store a link
    zf.writestr(info, target)


def test_a_zipped_repository_is_extracted_without_its_venv_git_and_macosx_folders(tmp_path):
    """A repository zipped with its ``.venv`` (``bin/python`` is a link to the author's Python),
    ``.git`` and ``__MACOSX`` is graded as its folder would be: what grading's copy leaves out
    anyway is not extracted, so its links never refuse the zip (they did: the whole submission
    scored 0)."""
    archive = tmp_path / "alice.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("repo/tests/adapters.py", "x = 1\n")
        zf.writestr("repo/cs336_basics/__init__.py", "")
        zf.writestr("repo/.venv/pyvenv.cfg", "home = /Users/alice/.local/share/uv/python/bin\n")
        _link(zf, "repo/.venv/bin/python", "/Users/alice/.local/share/uv/python/bin/python3.12")
        _link(zf, "repo/env312/bin/python3", "python")  # a virtual environment under another name
        zf.writestr("repo/env312/pyvenv.cfg", "home = /usr/bin\n")
        _link(zf, "repo/.git/hooks/pre-commit", "/opt/hooks/pre-commit")
        _link(zf, "repo/venv", "/Users/alice/envs/cs336")  # a virtual environment linked in
        zf.writestr("__MACOSX/repo/._README.md", b"\x00\x05\x16\x07")
    safe_extract(archive, tmp_path / "out")
    extracted = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert extracted == ["repo/cs336_basics/__init__.py", "repo/tests/adapters.py"], extracted


# zips whose members the links and paths rules refuse, wherever they lie: (members, refusal)
REFUSED_WHEREVER = {
    "link_among_graded_files": ([("repo/.venv/pyvenv.cfg", None), ("repo/cs336_basics/tokenizer.py", "/etc/passwd")],
                                "is a link or special file"),
    "path_climbing_out_of_a_folder_left_out": ([("repo/tests/adapters.py", None), ("repo/.venv/../escape", "x")],
                                               "points outside"),
}


@pytest.mark.parametrize("case", list(REFUSED_WHEREVER))
def test_a_link_among_the_graded_files_or_a_path_climbing_out_still_refuses_the_zip(tmp_path, case):
    members, refusal = REFUSED_WHEREVER[case]
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, link_to in members:
            if link_to:
                _link(zf, name, link_to)
            else:
                zf.writestr(name, "x = 1\n")
    with pytest.raises(Rejected, match=refusal):
        safe_extract(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_unwrapped_folders_name_stays_on_its_line_of_the_output():
    """The folder an upload had everything in is named by the student (Gradescope's
    run_autograder passes it on): a newline in it must not add lines to the results' summary,
    such as a table row ``total  10 / 10`` of its own."""
    from types import SimpleNamespace

    from grader.intake import unwrapped_note

    name = "repo\ntotal              10 / 10           1/1\r\x1b[2J\u202e" + "x" * 300
    (line,) = unwrapped_note(SimpleNamespace(unwrapped=name))
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\u202e" not in line
    assert "repo\\ntotal              10 / 10" in line and len(line) < 200
