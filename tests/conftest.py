"""Fixtures shared by the graded suite: the implementation under test, the reference,
GPT-2 data from tiktoken, fixture files and seeded randomness."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pytest

from harness import use_shared_tiktoken_cache
from harness.gpt2_cache import GPT2_URLS, GPT2FilesMissing
from harness.gpt2_cache import gpt2_encoding as _load_gpt2_encoding
from harness.gpt2_cache import read_gpt2_file
from harness.impl import Implementation
from harness.keys import policy_value
from harness.plugin import implementation
from tests.oracles import gpt2_pattern

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
use_shared_tiktoken_cache()

EOT = "<|endoftext|>"
PUBLIC_FILES = ["multilingual.txt", "stories.txt", "corpus_en.txt"]  # fixtures students have


@pytest.fixture(scope="session")
def impl(pytestconfig: pytest.Config) -> Implementation:
    """The implementation under test (student/ by default), through adapters.py."""
    return implementation(pytestconfig, "submission")


@pytest.fixture(scope="session")
def ref(pytestconfig: pytest.Config) -> Implementation:
    """The reference solution, for expected values no independent oracle gives."""
    if not (ROOT / "reference").is_dir():
        pytest.skip("needs reference/, which only the course staff have")
    return implementation(pytestconfig, "reference")


@pytest.fixture(scope="session")
def seed(pytestconfig: pytest.Config) -> int:
    return pytestconfig.getoption("seed")


@pytest.fixture
def rng(seed: int, request: pytest.FixtureRequest) -> random.Random:
    """A random generator seeded by --seed and the test's name: reproducible per test."""
    return random.Random(f"{seed}:{request.node.nodeid}")


@pytest.fixture(scope="session")
def fixture_path():
    def path(name: str) -> Path:
        p = FIXTURES / name
        if not p.is_file():
            raise FileNotFoundError(f"fixture file {p} is missing")
        return p

    return path


def anchored(text: str, anchor: str = "a") -> list[str]:
    """The texts a test checks for ``text``: the text itself, and for the empty text an
    ordinary one too. An edge case whose right answer is empty ([], "", {}) would otherwise
    pass on code that returns empty values for everything: every test must be able to fail."""
    return [text] if text else [text, anchor]


def must_work_first(what: str, action) -> None:
    """Shared set-up of the rejection tests: ``action()``, the same function given valid
    arguments, must not raise, so that code raising ValueError for everything cannot pass a
    test that expects one. When it raises, the rejection test is skipped, without points: the
    cause is reported once, by the tests of the valid cases, not again by every rejection rule."""
    try:
        action()
    except NotImplementedError:
        raise  # the stub: "not implemented: ..." says it best
    except Exception as err:  # noqa: BLE001 - any failure of the valid call is the precondition's
        first = str(err).splitlines()[0] if str(err) else ""
        pytest.skip(f"not graded until {what} works: it raised {type(err).__name__}: {first}")


def ratio_must_work_first(impl) -> None:
    """Shared set-up of the tests whose expected compression ratio is 1.0 (the byte
    tokenizer's, one id per byte): 1.0 is also what a compression_ratio returning 1.0 for
    everything gives, so they are graded only once a ratio that is not 1 is right, the
    hand-worked compression_ratio("héllo", [1, 2, 3]) = 6 UTF-8 bytes / 3 ids = 2.0. Otherwise
    skipped, without points, as by :func:`must_work_first`; the tests of compression_ratio
    itself say what is wrong."""
    what, got = 'compression_ratio("héllo", [1, 2, 3])', []
    must_work_first(what, lambda: got.append(impl.run_compression_ratio("héllo", [1, 2, 3])))
    if got[0] != 2.0:
        pytest.skip(f"not graded until {what} is right: it returned {got[0]!r}, expected 2.0 (6 UTF-8 bytes / 3 ids)")


def read_fixture(fixture_path, name: str) -> str:
    """A fixture file's text, decoded from its bytes so "\r\n" stays as it is in the file."""
    return fixture_path(name).read_bytes().decode("utf-8")


def gpt2_or_fail(load):
    """``load()``; a missing GPT-2 cache fails the test with one line (no urllib3 traceback)."""
    try:
        return load()
    except GPT2FilesMissing as err:
        message = str(err)
    pytest.fail(message, pytrace=False)  # outside the except: no "during handling" chain


@pytest.fixture(scope="session")
def gpt2_encoding():
    return gpt2_or_fail(_load_gpt2_encoding)


@pytest.fixture(scope="session")
def gpt2_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """GPT-2's vocab.json and merges.txt, read through tiktoken's download cache."""
    out = tmp_path_factory.mktemp("gpt2")
    for name in GPT2_URLS:
        (out / name).write_bytes(gpt2_or_fail(lambda: read_gpt2_file(name)))
    return {"vocab": out / "vocab.json", "merges": out / "merges.txt"}


class CorpusFiles:
    """Each drawn corpus written to a file of its own, for a training call (``write(text)``,
    its path); shown as ``<corpus files>``: Hypothesis prints every argument of a failing
    example, fixtures included, and pytest's ``tmp_path_factory`` took the lines that should
    have shown the text and the special tokens."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory

    def write(self, text: str) -> Path:
        path = self._factory.mktemp("corpus") / "corpus.txt"
        path.write_bytes(text.encode("utf-8"))
        return path

    def __repr__(self) -> str:
        return "<corpus files>"


@pytest.fixture(scope="session")
def corpus_files(tmp_path_factory: pytest.TempPathFactory) -> CorpusFiles:
    """Where a test drawing its corpus writes each one (a :class:`CorpusFiles`)."""
    return CorpusFiles(tmp_path_factory)


class VocabMerges(tuple):
    """``(vocab, merges)``, shown by its sizes: Hypothesis prints every argument of a failing
    example, fixtures included, and GPT-2's whole vocab and merges took 2,000 lines."""

    def __repr__(self) -> str:
        return f"<GPT-2 vocab ({len(self[0])} ids) and merges ({len(self[1])})>"


@pytest.fixture(scope="session")
def gpt2_vocab_merges(gpt2_files) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """GPT-2's vocabulary (id -> bytes) and merges, decoded independently of any submission
    (a :class:`VocabMerges`)."""
    table = gpt2_byte_decoder()
    encoder = json.loads(gpt2_files["vocab"].read_text(encoding="utf-8"))
    vocab = {i: bytes(table[ch] for ch in tok) for tok, i in encoder.items()}
    merges = []
    for line in gpt2_files["merges"].read_text(encoding="utf-8").splitlines()[1:]:
        if line:
            a, b = line.split(" ")
            merges.append((bytes(table[ch] for ch in a), bytes(table[ch] for ch in b)))
    return VocabMerges((vocab, merges))


@pytest.fixture(scope="session")
def gpt2_ordinary_vocab(gpt2_vocab_merges, gpt2_encoding) -> dict[int, bytes]:
    """GPT-2's ordinary tokens: its vocab without the ids of tiktoken's GPT-2 special tokens
    (``<|endoftext|>``, 50256): what any tokenization of ordinary text is made of."""
    specials = {gpt2_encoding.encode_single_token(s) for s in gpt2_encoding.special_tokens_set}
    return {i: token for i, token in gpt2_vocab_merges[0].items() if i not in specials}


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's printable character -> byte table, rebuilt from its published definition (a
    copy of it each call: some tests ask per token)."""
    return dict(_gpt2_byte_decoder())


@functools.cache
def _gpt2_byte_decoder() -> dict[str, int]:
    keep = {*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)}
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[chr(b)] = b
        else:
            table[chr(256 + extra)] = b
            extra += 1
    return table


_FROM_REFERENCE = object()
STOP_MARGIN = 0.5  # seconds past the speed limit at which the submission's timed run is stopped


@pytest.fixture
def check_speed(pytestconfig: pytest.Config, record_property, impl):
    """``check_speed(what, run_impl, run_ref, expected=..., hint=...)``: time the reference (best of 3)
    while every process of the submission is stopped (it cannot slow the reference down and
    so widen its own limit), then the submission (once), on the same work in this run,
    stopped once past the limit. The test passes only if the submission's result is correct
    (equal to ``expected`` when given, else to the reference's result) and within the
    policy's multiple of the reference plus its floor. The speed line, with the reference
    time used, is recorded either way. ``hint``, what usually makes such code slow, ends a
    "too slow" line (a hidden test shows its first line only). ``explain(result)``, given, says
    what is wrong with a wrong result by raising ``AssertionError`` (``assert_ids_equal``: the
    first differing id, both tokens' bytes and where in the input)."""
    from harness.timing import SpeedPolicy, best_time, result_difference, speed_report, timed_within

    policy = policy_value(pytestconfig, "speed", SpeedPolicy())  # the grading policy's, when grading

    def check(what: str, run_impl, run_ref, expected=_FROM_REFERENCE, hint: str = "", explain=None):
        impl.ready()  # a worker's start is never timed (an earlier stop may have ended the last)
        with impl.paused() as stopped:
            ref_result, reference = best_time(run_ref)
        limit = policy.limit(reference)
        # stopped a little past the limit, so that the verdict never rests on a stop's timing
        result, seconds, over = timed_within(run_impl, limit + STOP_MARGIN)
        report = speed_report(what, seconds, reference, policy, stopped=stopped)
        record_property("speed", report)
        look = f"; look for: {hint}" if hint else ""
        if over:
            pytest.fail(f"too slow: stopped after {seconds:.2f} s, past its limit (its result was not awaited): "
                        f"{report}{look}", pytrace=False)
        wrong = result_difference(ref_result if expected is _FROM_REFERENCE else expected, result)
        if wrong is not None and explain is not None:  # the test's own account of the difference
            try:
                explain(result)
            except AssertionError as err:
                wrong = str(err)
        assert wrong is None, f"wrong result, and speed counts only for correct results: {wrong}\n{report}"
        assert seconds <= limit, f"too slow: {report}{look}"
        return result

    return check


@pytest.fixture(scope="session")
def gpt2_pretokenize():
    """The oracle of GPT-2 pre-tokenization: ``regex.findall`` with tiktoken's own pattern."""
    import regex

    return regex.compile(gpt2_pattern()).findall


# ---- part 5: the tokenizer -------------------------------------------------------------


@pytest.fixture(scope="session")
def gpt2_tokenizer(impl, gpt2_vocab_merges):
    """The implementation's tokenizer with GPT-2's vocab and merges and ``<|endoftext|>``
    as special token, built once per session (construction may take about a second), from
    copies (:func:`fresh`)."""
    vocab, merges = fresh(gpt2_vocab_merges)
    return impl.get_tokenizer(vocab, merges, [EOT])


@pytest.fixture(scope="session")
def gpt2_oracle(gpt2_encoding):
    """tiktoken's GPT-2 ids for a text, ``<|endoftext|>`` allowed as special token."""

    def encode(text: str) -> list[int]:
        return gpt2_encoding.encode(text, allowed_special={EOT})

    return encode


def fresh(vocab_merges):
    """Copies of the session's GPT-2 vocab and merges for the submission: what it does to the
    dict and list it is given (a tokenizer appending specials the vocab lacks, as CS336's
    handout words it, or code overwriting them on purpose, which reaches the caller's objects
    isolated as in-process) must not change the vocab and merges later tests compute expected
    values from or give the reference; leaving the caller's dict alone is
    test_callers_vocab_and_merges_are_not_modified's rule, not theirs."""
    vocab, merges = vocab_merges
    return dict(vocab), list(merges)


def merges_prefix_vocab(merges: list[tuple[bytes, bytes]]) -> dict[int, bytes]:
    """The vocabulary a byte-level BPE with these merges has: id ``b`` is the byte ``b``
    and id ``256 + k`` is the result of merge ``k``."""
    vocab = {b: bytes([b]) for b in range(256)}
    for k, (a, b) in enumerate(merges):
        vocab[256 + k] = a + b
    return vocab


def tiktoken_for_merges(merges: list[tuple[bytes, bytes]], special_tokens: list[str] = ()):
    """An independent tiktoken ``Encoding`` using these merges with GPT-2's pattern: token
    ranks are the ids of :func:`merges_prefix_vocab`, specials get the next ids in order.
    tiktoken merges the adjacent pair whose concatenation has the lowest rank; for GPT-2's
    merges and their prefixes that agrees with "apply the earliest merge first" (the rule
    the assignment states), which the hand-worked tests check on their own."""
    import tiktoken

    vocab = merges_prefix_vocab(merges)
    ranks = {token: i for i, token in vocab.items()}
    assert len(ranks) == len(vocab), "tiktoken_for_merges needs merges with distinct results"
    specials = {tok: len(vocab) + k for k, tok in enumerate(special_tokens)}
    return tiktoken.Encoding(
        name=f"gpt2_prefix_{len(merges)}", pat_str=gpt2_pattern(), mergeable_ranks=ranks, special_tokens=specials
    )
