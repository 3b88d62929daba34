"""No test passes on a submission that implements nothing.

Three submissions in ``selftests/vacuous/``: one where every adapter and method raises
ValueError (the exception the rejection tests expect, with every argument in its message),
one where each returns an empty value of the right type, and one whose constructors build a
tokenizer whose every method raises ValueError (so a rejection test reaches the call it
rejects). Graded on the whole suite, each must score exactly 0 (the first two together about
40 s on a quiet machine; the whole module is in the slow tier); the tests that once passed on
one of them are checked case by case in the same gradings' reports (a regression check:
graded, and not one point).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .prefetch import prefetched
from .support import run_grade

VACUOUS = Path(__file__).resolve().parent / "vacuous"
KINDS = ["raise_everywhere", "return_empty", "refuse_after_construction"]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]  # each test waits on whole-suite gradings

# Tests that passed on one of them before they were made to check an ordinary case too
# (the found-and-fixed list, 2026-11-23): each edge case must also fail on code that does nothing.
ONCE_VACUOUS = [
    "tests/hidden/test_warmup_hidden.py::test_character_decode_rejects_a_bad_id_anywhere",
    "tests/hidden/test_warmup_hidden.py::test_byte_decode_rejects_a_bad_id_anywhere",
    "tests/public/test_warmup.py::test_compression_ratio_rejects_empty_ids",
    "tests/public/test_warmup.py::test_character_ids_are_code_points[empty]",
    "tests/public/test_warmup.py::test_character_decode_is_chr_of_each_id[empty]",
    "tests/public/test_warmup.py::test_character_round_trip[empty]",
    "tests/public/test_warmup.py::test_byte_ids_are_utf8_bytes[empty]",
    "tests/public/test_warmup.py::test_byte_round_trip[empty]",
    "tests/public/test_warmup.py::test_word_round_trip_replaces_exactly_the_unseen_words[empty_text]",
    "tests/public/test_warmup.py::test_compression_ratio_is_utf8_bytes_per_id[empty_text]",
    "tests/public/test_special_tokens.py::test_empty_special_token_is_rejected",
    "tests/public/test_special_tokens.py::test_empty_text_gives_no_pieces",
    "tests/hidden/test_primitives_hidden.py::test_merge_leaves_random_input_unmodified",
    "tests/public/test_primitives.py::test_pair_counts_count_every_adjacent_pair",
    "tests/public/test_primitives.py::test_merge_replaces_left_to_right_without_overlap",
    "tests/public/test_primitives.py::test_merge_does_not_modify_its_input",
    "tests/public/test_primitives.py::test_pair_counts_do_not_modify_their_input",
    "tests/public/test_pretokenize.py::test_pretokenize_matches_gpt2_pattern[empty]",
    "tests/public/test_train_bpe.py::test_vocab_size_below_bytes_plus_specials_is_a_value_error",
    "tests/public/test_train_bpe.py::test_vocab_size_is_checked_before_the_file_is_read",
    "tests/public/test_train_bpe.py::test_missing_file_is_a_value_error_or_file_not_found_naming_it",
    "tests/public/test_train_bpe.py::test_directory_is_a_value_error_naming_it",
    "tests/public/test_train_bpe.py::test_non_utf8_file_is_a_value_error_naming_it",
    "tests/public/test_train_bpe.py::test_empty_special_token_is_a_value_error",
    "tests/public/test_train_bpe.py::test_merges_never_cross_pretoken_boundaries",
    "tests/public/test_train_bpe.py::test_every_merge_lies_inside_one_pretoken",
    "tests/public/test_train_bpe.py::test_special_tokens_are_hard_boundaries",
    "tests/hidden/test_speed_hidden.py::test_training_on_corpus_en_correct_and_within_the_speed_limit",
    "tests/public/test_tokenizer.py::test_decode_of_encode_is_the_text[empty]",
    "tests/public/test_tokenizer.py::test_encode_of_empty_text_is_empty_list",
    "tests/public/test_tokenizer.py::test_decode_of_empty_list_is_empty_string",
    "tests/public/test_encode_iterable.py::test_encode_iterable_of_nothing_yields_nothing",
    "tests/public/test_encode_iterable.py::test_encode_iterable_of_a_file_equals_encode_of_its_text",
    # passed on refuse_after_construction (1.23 points, 2026-11-27): decode rejecting every id
    # passed the tests of decode's rejections; each now first needs a valid decode to work
    "tests/public/test_warmup.py::test_character_decode_rejects_ids_outside_unicode",
    "tests/public/test_warmup.py::test_byte_decode_rejects_ids_outside_0_255",
    "tests/public/test_warmup.py::test_word_decode_rejects_unknown_ids",
    "tests/hidden/test_warmup_hidden.py::test_word_decode_rejects_an_unknown_id_anywhere",
    "tests/public/test_tokenizer.py::test_decode_of_unknown_id_raises_value_error",
    "tests/hidden/test_tokenizer_hidden.py::test_decode_of_random_unknown_ids_raises_value_error",
]
# --max-time for the whole-suite gradings: grading.yaml's budget (540 s) cut them short under a
# load of 20 (a .ci/run, 2026-11-26: the speed group, graded last, not reached), and every
# case must be graded for the once-vacuous check
MAX_TIME = 1500


def _grade_all(base: Path) -> dict:
    """Each submission graded on the whole suite, with ``--report``, two at a time, without
    the known-bug replay (``BPE_DIAGNOSIS=0``): it only adds a line to a failure's feedback,
    never a point or a pass, which is all this module checks, and every test fails here, each
    failure replayed: 27 of the two gradings' 61 s of CPU (2026-11-26; scores and outcomes
    case by case the same with and without it, 205 entries each)."""
    def one(kind: str):
        return run_grade(base / kind, submission=VACUOUS / kind, quiet=True, report=True, max_time=MAX_TIME,
                         timeout=MAX_TIME + 120, diagnosis=False)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(KINDS, pool.map(one, KINDS)))


def _passed(run) -> list[str]:
    return [t["name"] for t in run.tests if t["score"] > 0]


@prefetched
def whole_suite(prefetch):
    """:func:`_grade_all`, in the background from the session's start."""
    return _grade_all(prefetch.mktemp("vacuous"))


def _cases_of(report: dict, nodeid: str) -> list[dict]:
    """The report's cases of ``nodeid``: that case, or every case of that test function."""
    return [c for c in report.get("tests", []) if c["nodeid"] == nodeid or c["nodeid"].startswith(nodeid + "[")]


@pytest.mark.parametrize("kind", KINDS)
def test_a_submission_that_implements_nothing_passes_no_once_vacuous_test(whole_suite, kind):
    run = whole_suite[kind]
    assert run.code == 0 and run.tests, f"{kind}: grading failed\n{run.stdout}\n{run.stderr}"
    report = run.report_data()
    not_graded = {n: [c["output"][:200] for c in _cases_of(report, n)] for n in ONCE_VACUOUS
                  if not [c for c in _cases_of(report, n) if c["outcome"] != "not run"]}
    assert not not_graded, f"{kind}: not graded: {not_graded}"
    passed = [c["nodeid"] for n in ONCE_VACUOUS for c in _cases_of(report, n) if c["outcome"] == "passed" or c["score"] > 0]
    assert not passed, f"{kind} passed: {passed}"


def test_a_submission_that_implements_nothing_scores_exactly_zero_on_the_whole_suite(whole_suite):
    """In the slow tier (about 40 s for both on a quiet machine). Run again on 2026-11-26 after
    it had been left to BPE_SLOW_SELFTESTS=1 alone: raise_everywhere scored 1.38, seven
    Tokenizer, save and from_files rejection tests passing on code that rejects everything;
    each now first needs the valid call to work (tests/public/test_tokenizer_rules.py)."""
    for kind, run in whole_suite.items():
        # every graded test function is an entry (204 on 2026-11-26), none lost to a crash
        assert run.code == 0 and len(run.tests) > 150, f"{kind}: grading failed\n{run.stdout}\n{run.stderr}"
        assert not _passed(run), f"{kind} passed: {_passed(run)}"
        assert run.results["score"] == 0
