"""Failures that teach: an encode_iterable failure names the position, both tokens' bytes,
the text around it and where the chunk boundaries fell; a probe's count/digest failure is
re-explained the same way, with how to rebuild the input."""

from __future__ import annotations

import re

import pytest

from tests.diff import FIX_PRETOKENIZE
from tests.streamdiff import assert_stream_ids_equal, chunks_around, explain_file_mismatch

VOCAB = {i: bytes([i]) for i in range(256)} | {300: b"\n ", 301: b" b"}
# "a\n  b" is "a", "\n ", " b" (ids 97, 300, 301); encoded as two lines "a\n" + "  b" it
# would be "a", "\n", " ", " b" (97, 10, 32, 301)
CHUNKS = ["a\n", "  b"]
RIGHT, CHUNKED = [97, 300, 301], [97, 10, 32, 301]


def failure(actual, expected=RIGHT, chunks=CHUNKS, vocab=VOCAB) -> str:
    with pytest.raises(AssertionError) as err:
        assert_stream_ids_equal(actual, expected, chunks, vocab=vocab)
    return str(err.value)


def test_equal_ids_pass():
    assert_stream_ids_equal(RIGHT, RIGHT, CHUNKS, vocab=VOCAB)


def test_message_has_position_both_tokens_text_and_chunk_boundaries():
    message = failure(CHUNKED)
    assert "position 1" in message
    assert "300 b'\\n '" in message and "10 b'\\n'" in message  # both tokens with their bytes
    assert "input around it" in message
    assert "'a\\n' | '  b'" in message, message  # the boundary between the two chunks


def test_boundaries_are_clipped_to_a_window_around_the_difference():
    chunks = ["x" * 1000, "y" * 5, "z" * 1000]
    shown = chunks_around(chunks, 1002)
    assert shown.count("|") == 2 and len(shown) < 120, shown
    assert shown.startswith("…'x") and shown.endswith("z'…")


def test_many_small_chunks_are_elided():
    shown = chunks_around(list("abcdefghijklmnopqrstuvwxyz" * 3), 40)
    assert "..." in shown and shown.count("|") <= 9, shown


def test_probe_mismatch_is_re_explained_with_the_rebuild_recipe(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(CHUNKS), encoding="utf-8", newline="")

    class ChunkByChunk:  # the classic bug: each chunk encoded on its own
        def encode_iterable(self, lines):
            table = {"a\n": [97, 10], "  b": [32, 301]}
            for line in lines:
                yield from table[line]

    with pytest.raises(AssertionError) as err:
        explain_file_mismatch(ChunkByChunk(), str(path), RIGHT, VOCAB, "the recipe")
    message = str(err.value)
    assert "position 1" in message and "'a\\n' | '  b'" in message and "the input: the recipe" in message, message
    assert "the input: the recipe" in message.splitlines()[1], "second: feedback keeps a failure's first lines"


def test_a_token_spanning_a_chunk_boundary_names_chunks_encoded_on_their_own():
    # "\n " (id 300) starts at character 1 and the boundary after "a\n" is at character 2
    first = failure(CHUNKED).splitlines()[0]  # the line a hidden test shows
    assert first.startswith("encode_iterable ids differ at position 1"), first
    assert "the expected token b'\\n ' spans the chunk boundary at character 2 (between chunk 1 and chunk 2 of 2)" in first, first
    assert "encoded on its own" in first
    assert first.endswith("pre-tokens and special tokens must not be split at chunk boundaries"), first


def test_a_spanned_boundary_after_empty_chunks_names_the_chunks_on_both_sides():
    # the first line (all a hidden test shows) said where, as a character offset only: with
    # thousands of chunks (a file's lines, random chunkings) the chunk numbers say which
    first = failure(CHUNKED, chunks=["a", "\n", "", "", "  b"]).splitlines()[0]
    assert "spans the chunk boundary at character 2 (between chunk 2 and chunk 5 of 5)" in first, first


def test_a_token_of_theirs_across_the_boundary_does_not_blame_chunks_encoded_on_their_own():
    # "a\n  b" given as "a", "\n  " (id 302), "b": other merges, a token across the boundary at
    # character 2: the chunks were not encoded apart, so the first line does not say they were
    first = failure([97, 302, 98], vocab=VOCAB | {302: b"\n  "}).splitlines()[0]
    assert first.startswith("encode_iterable ids differ at position 1"), first
    assert "encoded on its own" not in first and "spans the chunk boundary" not in first, first


def test_a_difference_inside_one_chunk_does_not_blame_the_boundaries():
    # one chunk, ids wrong inside it: no boundary to blame
    message = failure([97, 10, 32, 301], chunks=["a\n  b"])
    assert "position 1" in message and "spans the chunk boundary" not in message, message


@pytest.mark.parametrize("got, tie", [([(b"a", b"a")], True), ([(b"b", b"c")], False)], ids=["tie", "no-tie"])
def test_a_merge_that_ties_names_the_tie_break_and_the_counting_as_causes(got, tie):
    # "ab aa": (a, b) and (a, a) occur once each; the greatest must win. A submission picking
    # (a, a) breaks ties the wrong way, or counts the text otherwise (real CS336 trainers cut
    # the last byte of a chunk off): the message names both causes, only when the counts tie
    from tests.diff import assert_merges_equal

    with pytest.raises(AssertionError) as err:
        assert_merges_equal(got, [(b"a", b"b")], word_counts={b"ab": 1, b"aa": 1})
    message = str(err.value)
    assert message.startswith("merge #0 differs"), message
    assert ("the tie must go to the lexicographically greatest pair" in message) is tie, message
    assert ("if yours does, your counts differ from these" in message) is tie, message


class _Merge:
    """An implementation whose run_merge is ``merge``, for the merge tests' helpers."""

    def __init__(self, merge):
        self.run_merge = merge


def _catalogued_merge(name: str):
    """The ``merge`` a catalogued mutant appends to reference/primitives.py, as a function."""
    from mutants.catalogue import by_name

    scope: dict = {}
    (edit,) = by_name(name).edits
    exec(edit.code, scope)  # noqa: S102 - the catalogue's own code
    return scope["merge"]


_right_to_left = _catalogued_merge("merge_right_to_left")


def _rescanning(ids, pair, new_id):  # merges its own output again while the pair is left
    from reference.primitives import merge

    out = merge(ids, pair, new_id)
    return _rescanning(out, pair, new_id) if out != ids and any(p == tuple(pair) for p in zip(out, out[1:])) else out


def test_a_drawn_merge_checked_with_a_fresh_id_says_which_drawn_call_it_stands_for():
    # Hypothesis showed "new_id=0" and the message "merge([0, 0, 0], (0, 0), 1) returned [0, 1]":
    # the rules are checked with a new id found nowhere, which nothing said
    from tests.public.test_primitives import check_merge

    with pytest.raises(AssertionError) as err:
        check_merge(_Merge(_right_to_left), [0, 0, 0], (0, 0), 0)
    lines = str(err.value).splitlines()
    assert lines[0].startswith("merge([0, 0, 0], (0, 0), 1) returned [0, 1]: in a run of 0s"), lines
    assert lines[1].startswith("  the drawn case is merge([0, 0, 0], (0, 0), 0); its new id 0 is replaced here by 1"), lines
    with pytest.raises(AssertionError) as err:  # right with the fresh id, wrong with the drawn one
        check_merge(_Merge(_rescanning), [0, 0, 0], (0, 0), 0)
    lines = str(err.value).splitlines()
    assert lines[0] == "id at position 1 differs (expected 2 ids, got 1)", lines  # not "expected 2 id of merge(...)s"
    assert lines[1].startswith("  call: merge([0, 0, 0], (0, 0), 0), the drawn case; expected: what merge([0, 0, 0], (0, 0), 1)"), lines


def test_every_merge_test_shows_the_merge_call_it_made(tmp_path):
    # the merge tests of each BPE step on "aaabdaaabac" and the hidden twins showed no call, and
    # the hidden compose test's ids were counted as "expected 1700 id after merge 3 (101, 32)s"
    import re
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    from harness.childenv import child_env
    from mutants import by_name
    from mutants.build import build

    from .support import ROOT

    submission = build(by_name("merge_right_to_left"), tmp_path / "merge_right_to_left")
    junit = tmp_path / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "--submission", str(submission), "tests/public/test_primitives.py",
         "tests/hidden/test_primitives_hidden.py", "-k", "merge", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=ROOT, env=child_env(BPE_DIAGNOSIS="0"), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    failures = {case.get("name"): case.find("failure").text or "" for case in ET.parse(junit).iter("testcase")
                if case.find("failure") is not None}
    assert any("aaabdaaabac" in n for n in failures) and any("oracle" in n for n in failures), list(failures)
    for name, text in failures.items():
        assert re.search(r"(call: |the drawn case is )merge\(\[", text), (name, text[:1500])
        assert not re.search(r"\d+ id (of|after) merge", text), (name, text[:1500])


def test_ids_that_stop_early_say_they_end_before_the_input_does():
    # "a\n  b" should be 97, 300, 301; a stream that stops after "a" gives [97]: the next
    # expected id (300, b"\n ") starts at character 1, inside the first chunk "a\n"
    first = failure([97]).splitlines()[0]  # the line a hidden test shows
    assert first.startswith("encode_iterable ids differ at position 1"), first
    assert "ids end at character 1 of 5, in chunk 1 of 2, before its input does" in first, first
    assert "never encoded" in first, first  # not "stopped": a stream may read on and drop what it held back
    assert "spans the chunk boundary" not in first


def test_nothing_at_all_says_the_ids_end_at_the_start():
    first = failure([]).splitlines()[0]
    assert "ids end at character 0 of 5, in chunk 1 of 2, before its input does" in first, first


def test_an_endless_stream_that_yields_nothing_fails_saying_so_not_with_stopiteration():
    from tests.streamdiff import first_id

    def gives_up(lines):  # reads 100 chunks, yields nothing, returns
        for _, _line in zip(range(100), lines):
            pass
        return
        yield

    endless = iter(lambda: "hello world ", None)
    with pytest.raises(AssertionError) as err:
        first_id(gives_up(endless), "hello world ")
    assert "stopped without yielding an id while its input ('hello world ', repeated) went on" in str(err.value)
    assert first_id(iter([15496, 995]), "hello world ") == 15496


def test_a_tie_lost_to_counts_updated_wrongly_after_a_merge_names_that_cause_too():
    # "aab" and "baba": merges (b, a), then (ba, ba); then (a, b) and (a, a) occur once each and
    # (a, b) must win. A trainer that, merging (b, a) in "baba", subtracts the one (a, b) between
    # the two occurrences twice (a real CS336 trainer does) counts (a, b) 0 and picks (a, a)
    from tests.diff import assert_merges_equal

    done = [(b"b", b"a"), (b"ba", b"ba")]
    with pytest.raises(AssertionError) as err:
        assert_merges_equal(done + [(b"a", b"a")], done + [(b"a", b"b")], word_counts={b"aab": 1, b"baba": 1})
    message = str(err.value)
    assert message.startswith("merge #2 differs (the first 2 merges agree)"), message
    assert "occurring 1 times at that step" in message and "the counts tie" in message, message
    assert "counts updated wrongly after an earlier merge" in message, message


@pytest.mark.parametrize("what, first_line", [
    ("id", "id at position 1 differs (expected 3 ids, got 2)"),
    ("(pair, count)", "(pair, count) at position 1 differs (expected 3 (pair, count)s, got 2)"),
])
def test_the_first_differing_item_is_named_by_its_position_not_read_as_a_value(what, first_line):
    # "id 1 differs" read as token id 1; the README promises "ids differ at position 12"
    from tests.diff import assert_items_equal

    with pytest.raises(AssertionError) as err:
        assert_items_equal([5, 6], [5, 7, 8], what=what)
    assert str(err.value).splitlines()[0] == first_line



@pytest.mark.parametrize("check, first_line", [
    (lambda d: d.assert_ids_equal([5, 6], [5]), "ids differ at position 1 (expected 1 id, got 2)"),
    (lambda d: d.assert_items_equal([5, 6], [5], what="id"), "id at position 1 differs (expected 1 id, got 2)"),
    (lambda d: d.assert_text_equal("ab", "a"), "text differs at character 1 (expected 1 character, got 2)"),
    (lambda d: d.assert_merges_equal([(b"a", b"b"), (b"c", b"d")], [(b"a", b"b")]),
     "expected 1 merge, got 2; the first 1 agree"),
], ids=["ids", "items", "text", "merges"])
def test_a_count_of_one_reads_in_the_singular(check, first_line):
    # a field test read "expected 1 ids"
    from tests import diff

    with pytest.raises(AssertionError) as err:
        check(diff)
    assert first_line in str(err.value).splitlines()[0], str(err.value)


BYTES_ONLY_TOKENIZER = '''
class Tokenizer:  # a draft that never applies a merge: one id per byte
    def __init__(self, vocab, merges, special_tokens=None):
        self.ids = {token: i for i, token in vocab.items()}

    def encode(self, text):
        return [self.ids[bytes([b])] for b in text.encode("utf-8")]
'''


def test_a_failing_random_example_shows_gpt2s_vocab_by_its_size_not_its_entries(tmp_path):
    # Hypothesis prints every argument of a failing example, fixtures included: GPT-2's
    # (vocab, merges) took 2,000 lines (32 kB) before the failure's message
    import subprocess
    import sys

    from harness.childenv import child_env

    from .support import ROOT, make_submission

    sub = make_submission(tmp_path / "sub")
    (sub / "student" / "tokenizer.py").write_text(BYTES_ONLY_TOKENIZER, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--submission", str(sub),
         "tests/public/test_tiktoken_agreement.py::test_ids_match_tiktoken_gpt2_on_pretoken_edge_cases"],
        cwd=ROOT, env=child_env(drop=("BPE_SEED",), BPE_DIAGNOSIS="0"), capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Failing test case" in out and "text=" in out, out[-3000:]
    assert "overly large repr" not in out and out.count("\n") < 80, f"{out.count(chr(10))} lines:\n{out[:3000]}"
    assert "<GPT-2 vocab (50257 ids) and merges (50000)>" in out, out[-3000:]


def test_ids_around_a_difference_are_listed_without_string_quotes():
    # each id was shown as a quoted string of its own repr: ["40 b'I'", '1101 b"\'m"'], ['25', '147']
    from tests.diff import assert_ids_equal

    vocab = {40: b"I", 1101: b"'m", 1102: b"'s"}
    with pytest.raises(AssertionError) as err:
        assert_ids_equal([40, 1101], [40, 1102], vocab=vocab)
    message = str(err.value)
    assert "expected[0:7] = [40 b'I', 1102 b\"'s\"]" in message, message
    assert "got[0:7]      = [40 b'I', 1101 b\"'m\"]" in message, message
    with pytest.raises(AssertionError) as err:
        assert_ids_equal([25, 148], [25, 147])
    assert "expected[0:7] = [25, 147]" in str(err.value), str(err.value)


def test_a_merge_that_differs_shows_the_call_that_gave_it():
    # test_merge_never_rescans_the_new_id[new_id_is_both] said "expected [5, 5], got [5]" and
    # the hand-worked cases' names ("ids0-pair0-9-expected0") did not give the input either
    from tests.diff import assert_items_equal

    with pytest.raises(AssertionError) as err:
        assert_items_equal([5], [5, 5], what="id", call="merge([5, 5, 5, 5], (5, 5), 5)")
    lines = str(err.value).splitlines()
    assert lines[0] == "id at position 1 differs (expected 2 ids, got 1)", lines
    assert lines[1] == "  call: merge([5, 5, 5, 5], (5, 5), 5)", lines


def test_a_merge_across_two_pre_tokens_says_its_pair_occurs_in_no_pre_token():
    # "ab ab": pre-tokens "ab", " ab"; a trainer merging across pre-tokens can pick (ab, " ")
    # (0 times inside a pre-token): "occurring 0 times" alone read as a contradiction
    from tests.diff import assert_merges_equal

    done = [(b"a", b"b")]
    with pytest.raises(AssertionError) as err:
        assert_merges_equal(done + [(b"ab", b" ")], done + [(b" ", b"ab")], word_counts={b"ab": 1, b" ab": 1})
    message = str(err.value)
    assert "occurring 0 times at that step" in message, message
    assert "your pair occurs inside no pre-token at that step" in message, message
    assert "never across two pre-tokens or a special token" in message, message
    assert "the counts tie" not in message, message


def test_a_less_frequent_merge_says_the_counts_differ():
    # (a, b) occurs 3 times and (c, d) once: a trainer picking (c, d) counted otherwise
    from tests.diff import assert_merges_equal

    with pytest.raises(AssertionError) as err:
        assert_merges_equal([(b"c", b"d")], [(b"a", b"b")], word_counts={b"ab": 3, b"cd": 1})
    message = str(err.value)
    assert "your pair is not the most frequent at that step (1 < 3): your pair counts differ" in message, message
    assert "the counts tie" not in message and "inside no pre-token" not in message, message


def test_a_missing_pair_count_is_named_by_its_pair_not_by_a_shifted_position():
    # a get_pair_counts that skips a pair: comparing the sorted (pair, count) lists put the
    # next pair beside the missing one ("expected ((1, 3), 1) got ((2, 1), 1)")
    from tests.diff import assert_counts_equal

    expected = {(1, 2): 1, (1, 3): 1, (2, 1): 1, (3, 1): 2}
    with pytest.raises(AssertionError) as err:
        assert_counts_equal({(1, 2): 1, (2, 1): 1, (3, 1): 1}, expected)
    message = str(err.value)
    first = message.splitlines()[0]
    assert first.startswith("pair counts differ first at pair (1, 3)"), message
    assert "(expected 4 pairs, got 3; 2 pairs differ)" in first, message
    assert "expected: 1" in message and "got:      none (the pair is missing)" in message, message
    assert "(2, 1)" not in message, message


def test_two_text_pieces_in_a_row_are_shown_with_where_the_second_starts():
    # specials [". "] put into a regex unescaped: "." matches any character, so "b " is cut
    # out as if it were the special; the message must show that piece, not only its number
    from tests.oracles import split_rule_violation

    broken = split_rule_violation("ab cd. ef", [". "], ["a", "b ", "cd", ". ", "ef"])
    assert broken is not None and broken.startswith("pieces 0 and 1 are both text"), broken
    assert "'a'" in broken and "'b '" in broken and "character 1" in broken, broken
    assert "neither is a special token" in broken, broken


@pytest.mark.slow
def test_a_trainer_over_its_speed_limit_is_told_what_to_look_for(tmp_path):
    # the speed line gave both times and the limit, never what makes a trainer slow; a hidden
    # test shows its first line only, so the hint must be on it
    import subprocess
    import sys

    from harness.childenv import child_env

    from .support import ROOT, make_submission

    sub = make_submission(tmp_path / "sub")
    with open(sub / "student" / "train.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef train_bpe(input_path, vocab_size, special_tokens):  # far past any limit\n"
                "    import time\n    time.sleep(60)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--submission", str(sub),
         "tests/hidden/test_speed_hidden.py::test_training_on_corpus_en_correct_and_within_the_speed_limit"],
        cwd=ROOT, env=child_env(drop=("BPE_SEED",), BPE_DIAGNOSIS="0"), capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL,
    )
    first = next((line for line in proc.stdout.splitlines() if "too slow: stopped after" in line), "")
    assert first, proc.stdout[-3000:]
    assert "look for: the pair counts recomputed over the whole corpus after each merge" in first, first


def test_word_ids_that_differ_point_at_a_pretokenize_that_differs_first():
    # a WordTokenizer built on a pretokenize splitting " café" into " caf", "é": ids number
    # words by first appearance, so they part later than the words; the message gave ids only
    from tests.diff import assert_word_ids_equal

    text, gpt2 = "a café b.", ["a", " café", " b", "."]
    with pytest.raises(AssertionError) as err:
        assert_word_ids_equal([1, 2, 3, 4, 5], [1, 2, 3, 4], text, gpt2, lambda _: ["a", " caf", "é", " b", "."])
    message = str(err.value)
    assert message.startswith("ids differ at position 4"), message  # the ids part later than the words
    assert "your pretokenize already differs from GPT-2's on this text at pre-token #1 (expected ' café', got ' caf')" \
        in message, message
    assert FIX_PRETOKENIZE in message.splitlines()[0], message  # a hidden test shows its first line only


def test_every_pair_count_test_names_the_differing_pairs(tmp_path):
    # four pair-count tests compared with a bare ==, so a wrong get_pair_counts read pytest's
    # dict diff ("Differing items: {(1, 2): 1} != {(1, 2): 2}", "Right contains 1 more item")
    # where the others named the pair, the call and both counts: each failure of a pair-count
    # test, public and hidden, now comes from tests.diff.assert_counts_equal. The bug counts
    # only pairs at even positions: pairs missing and pairs counted too few times
    bug = "pair_counts_non_overlapping"
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    from harness.childenv import child_env
    from mutants import by_name
    from mutants.build import build

    from .support import ROOT

    submission = build(by_name(bug), tmp_path / bug)
    junit = tmp_path / "junit.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--submission", str(submission), "tests/public/test_primitives.py",
         "tests/hidden/test_primitives_hidden.py", "-k", "pair_counts", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=ROOT, env=child_env(BPE_DIAGNOSIS="0"), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    failures = {case.get("name"): case.find("failure").get("message", "") + "\n" + (case.find("failure").text or "")
                for case in ET.parse(junit).iter("testcase") if case.find("failure") is not None}
    assert len(failures) > 5, proc.stdout[-3000:]
    for name, text in failures.items():
        assert "pair counts differ first at pair" in text, (name, text[:1500])
        assert "Differing items" not in text and "more item" not in text, (name, text[:1500])
        if "random" not in name and "aaabdaaabac" not in name:  # hand-worked and drawn cases show the call
            assert "call: get_pair_counts([" in text, (name, text[:1500])


def test_pair_counts_name_missing_extra_and_wrong_count_pairs_and_a_non_dict_plainly():
    from tests.diff import assert_counts_equal

    with pytest.raises(AssertionError) as err:
        assert_counts_equal({(1, 2): 1, (9, 9): 1}, {(1, 2): 2, (2, 3): 1}, call="get_pair_counts([1, 2, 3, 1, 2])")
    lines = str(err.value).splitlines()
    assert lines[0] == "pair counts differ first at pair (1, 2) (expected 2 pairs, got 2; 3 pairs differ)", lines
    assert lines[1] == "  call: get_pair_counts([1, 2, 3, 1, 2])", lines
    assert lines[4:] == ["  missing (expected, not in yours): (2, 3)", "  extra (in yours, not expected): (9, 9): 1",
                         "  wrong count: (1, 2): 1 instead of 2"], lines
    with pytest.raises(AssertionError) as err:
        assert_counts_equal({(5, 5): 1}, {(5, 5): 2})
    assert str(err.value).splitlines()[0].endswith("(expected 1 pair, got 1; 1 pair differs)"), str(err.value)
    with pytest.raises(AssertionError) as err:  # not a TypeError from dict(None)
        assert_counts_equal(None, {(5, 5): 2})
    assert str(err.value).startswith("pair counts should be a dict of pair -> count, got NoneType: None"), str(err.value)


# "a  b": GPT-2's pre-tokens "a", " ", " b" (ids 97, 32, 301); a pattern without GPT-2's
# \s+(?!\S) branch gives "a", "  ", "b" (ids 97, 32, 32, 98)
SPACES, SPACES_VOCAB, SPACES_IDS = "a  b", {**VOCAB, 301: b" b"}, [97, 32, 301]


@pytest.mark.parametrize(
    "actual, theirs, hinted",
    [
        ([97, 32, 32, 98], lambda text: ["a", "  ", "b"], True),  # the pre-tokens part (byte 1) before the ids (byte 2)
        ([97, 32, 32, 98], lambda text: ["a", " ", " b"], False),  # GPT-2's pre-tokens: merging is what differs
        ([98, 32, 301], lambda text: ["a", "  ", "b"], False),  # the ids part first (byte 0): the pre-tokens do not explain it
        ([97, 32, 32, 98], lambda text: [][5], False),  # pretokenize raises (not written yet): its own tests say so
    ],
    ids=["pretokens_part_first", "pretokens_agree", "ids_part_first", "pretokenize_raises"],
)
def test_ids_that_differ_point_at_a_pretokenize_that_differs_first_only_where_it_does(actual, theirs, hinted):
    # a pattern missing a branch failed every tiktoken-agreement test with ids alone; Part 1's
    # word tokenizer already said "fix pretokenize first"
    from tests.diff import assert_ids_equal

    with pytest.raises(AssertionError) as err:
        assert_ids_equal(actual, SPACES_IDS, vocab=SPACES_VOCAB, text=SPACES, pretokenize=theirs)
    message = str(err.value)
    assert ("fix pretokenize first" in message) == hinted, message
    assert (FIX_PRETOKENIZE in message.splitlines()[0]) == hinted, message  # a hidden test shows its first line only
    if hinted:
        assert "at pre-token #1 (expected ' ', got '  ') at byte 1" in message, message


def test_the_byte_where_ids_differ_is_also_given_as_a_character():
    # encode_iterable's messages said "at character 777" beside this line's "at byte 787"
    from tests.diff import assert_ids_equal

    vocab = {**VOCAB, 400: "é".encode(), 401: b" b"}
    with pytest.raises(AssertionError) as err:
        assert_ids_equal([400, 32, 98], [400, 401], vocab=vocab, text="é b")
    assert "at byte 2 (character 1) of the input" in str(err.value), str(err.value)


def test_a_pattern_missing_a_branch_fails_tiktoken_agreement_with_fix_pretokenize_first(tmp_path):
    # the catalogued bug as a whole submission, through the public test as students run it
    import subprocess
    import sys

    from harness.childenv import child_env
    from mutants.build import build
    from mutants.catalogue import by_name

    from .support import ROOT

    sub = tmp_path / "sub"
    build(by_name("pattern_missing_trailing_space_branch"), sub)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--submission", str(sub),
         "tests/public/test_tiktoken_agreement.py::test_ids_match_tiktoken_gpt2_on_targeted_text[long_space_run]"],
        cwd=ROOT, env=child_env(drop=("BPE_SEED",), BPE_DIAGNOSIS="0"), capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "your pretokenize already differs from GPT-2's on this text at pre-token #1" in proc.stdout, proc.stdout[-3000:]
    assert "fix pretokenize first (tests/public/test_pretokenize.py)" in proc.stdout, proc.stdout[-3000:]


HIDDEN_TRAINING = ["tests/hidden/test_train_bpe_hidden.py::test_merges_match_naive_trainer_on_random_corpora[0]",
                   "tests/hidden/test_train_bpe_hidden.py::test_merges_match_reference_on_fixture[corpus_en_500]",
                   "tests/hidden/test_train_bpe_differential_hidden.py::test_training_matches_reference_with_random_special_tokens"]


def test_a_pattern_missing_a_branch_fails_each_hidden_training_test_with_fix_pretokenize_first(tmp_path):
    # the hidden training tests (the naive trainer's, the reference's, the drawn special
    # tokens') said only which merge and counts differed; the public ones said more
    import subprocess
    import sys

    from harness.childenv import child_env
    from mutants.build import build
    from mutants.catalogue import by_name

    from .support import ROOT

    sub = tmp_path / "sub"
    build(by_name("pattern_missing_trailing_space_branch"), sub)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--submission", str(sub), *HIDDEN_TRAINING],
        cwd=ROOT, env=child_env(drop=("BPE_SEED",), BPE_DIAGNOSIS="0"), capture_output=True, text=True,
        timeout=300, stdin=subprocess.DEVNULL,
    )
    assert f"{len(HIDDEN_TRAINING)} failed" in proc.stdout, proc.stdout[-3000:]
    # a hidden test's feedback is the first line of its failure: the pointer is there
    first_lines = re.findall(r"^E +AssertionError: (.*)$", proc.stdout, re.M)
    assert len(first_lines) == len(HIDDEN_TRAINING), proc.stdout[-3000:]
    assert all(line.endswith(f"on the training text (below): {FIX_PRETOKENIZE}") for line in first_lines), first_lines
    # counted in the failures' own lines: where CI is set, pytest's summary repeats each message whole
    details = re.findall(r"^E .*training counts pairs inside pre-tokens, so its merges follow yours$", proc.stdout, re.M)
    assert len(details) == len(HIDDEN_TRAINING), proc.stdout[-3000:]


@pytest.mark.parametrize("whole, blamed", [(CHUNKED, "encode"), (RIGHT, "chunks")], ids=["encode_wrong_too", "encode_right"])
def test_a_stream_whose_encode_of_the_whole_text_differs_too_is_not_blamed_on_its_chunks(whole, blamed):
    # a field test's ASCII pattern split "ão" in encode itself, and encode_iterable was told its
    # chunks were encoded on their own (each chunk boundary lay where its pre-tokens parted)
    with pytest.raises(AssertionError) as err:
        assert_stream_ids_equal(CHUNKED, RIGHT, CHUNKS, vocab=VOCAB, encode=lambda text: list(whole))
    message = str(err.value)
    assert ("fix encode first" in message) == (blamed == "encode"), message
    assert ("as if each chunk" in message) == (blamed == "chunks"), message


@pytest.mark.parametrize("theirs, hinted", [(lambda text: ["a", "  ", "b"], True), (lambda text: ["a", " ", " b"], False)],
                         ids=["pretokens_part", "pretokens_agree"])
def test_merges_that_differ_point_at_a_pretokenize_that_differs_on_the_training_text(theirs, hinted):
    # a pattern missing a branch failed the training tests with merges and counts alone
    from tests.diff import assert_merges_equal
    from tests.oracles import word_counts

    with pytest.raises(AssertionError) as err:
        assert_merges_equal([(b" ", b" ")], [(b" ", b"b")], word_counts=word_counts("a  b"), pretokenize=theirs)
    message = str(err.value)
    assert ("fix pretokenize first" in message) == hinted, message
    assert (FIX_PRETOKENIZE in message.splitlines()[0]) == hinted, message  # a hidden test shows its first line only
    if hinted:
        assert "at pre-token #1 (expected ' ', got '  '), in the training text's piece 'a  b'" in message, message
