"""The reference's fast pre-token counting (``reference/pretoken_counts.py``): the chunks a
large file is cut into count, added up, to the naive oracle's counts of the whole text. The
chunks are counted here in turn (what each worker process does), so no pool is started."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from reference.pretoken_counts import _count_file_chunk, chunk_offsets
from tests.hidden.naive import pretoken_counts

from .support import EOT, mixed_text

SPACED = "a <| |> b"  # a special token with spaces inside: a place that looks safe but is not
SPECIALS = {"none": [], "eot": [EOT], "spaced_and_overlapping": [EOT, SPACED, "<| |"]}


@pytest.mark.parametrize("specials", SPECIALS.values(), ids=SPECIALS)
def test_the_chunks_of_a_file_add_up_to_the_counts_of_its_whole_text(tmp_path, specials):
    rng = random.Random(0)
    text = mixed_text(rng, 20_000)
    cuts = sorted(rng.sample(range(len(text)), 100))
    text = SPACED.join(text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])) + SPACED * 40 + "x" * 700
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    offsets = chunk_offsets(path, 97, specials)
    assert len(offsets) > 20, "the file should be cut many times"
    total: Counter[str] = Counter()
    for start, end in zip(offsets, offsets[1:]):
        total.update(_count_file_chunk(str(path), start, end, specials))
    assert Counter({word.encode("utf-8"): n for word, n in total.items()}) == pretoken_counts(text, specials)


def test_no_cut_falls_inside_a_special_token_at_the_end_of_the_read_window(tmp_path):
    # _next_cut reads 64 KiB from where a chunk should end: put a special token across the
    # end of that window, after a stretch with no safe place, at every offset
    size, window, specials = 97, 1 << 16, SPECIALS["spaced_and_overlapping"]
    for k in range(len(SPACED) + 1):
        path = tmp_path / f"corpus{k}.txt"
        start = size + window - k  # where the special token starts
        path.write_bytes(("x" * start + SPACED + " tail").encode("utf-8"))
        offsets = chunk_offsets(path, size, specials)
        assert not [cut for cut in offsets if start < cut < start + len(SPACED)], (k, offsets)
