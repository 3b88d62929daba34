"""Where a test hands ``encode_iterable`` an open file (as CS336's tests do), the isolated
worker's submission gets a file of the streamed chunks (``sandbox.chunkfile.ChunkFile``), so
code that calls ``read`` or ``readline`` on it gets the outcome it gets in-process, where it is
handed the file itself. The file behaves as ``io.StringIO`` of the same text (the oracle)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.chunkfile import ChunkFile

from .support import adapters_only, implementation_of

OPERATION = st.one_of(
    st.tuples(st.just("read"), st.one_of(st.none(), st.integers(-1, 12))),
    st.tuples(st.just("readline"), st.one_of(st.none(), st.integers(-1, 12))),
    st.tuples(st.just("next"), st.none()),
)


def apply(f, operation: tuple) -> object:
    name, size = operation
    if name == "next":
        return next(f, "<end>")
    return getattr(f, name)(size)


def test_a_closed_file_refuses_to_be_read_as_a_closed_text_file_does():
    ours, oracle = ChunkFile(iter(["a\n", "b"])), io.StringIO("a\nb")
    for f in (ours, oracle):
        with f:
            assert f.readline() == "a\n" and not f.closed
        assert f.closed
    for read in (lambda f: f.read(), lambda f: f.readline(), next):
        with pytest.raises(ValueError, match="closed file"):
            read(oracle)
        with pytest.raises(ValueError, match="closed file"):
            read(ours)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n é", max_size=40), st.lists(OPERATION, max_size=12))
def test_a_file_of_a_texts_lines_reads_as_the_text_does(text, operations):
    lines = io.StringIO(text).readlines()  # the chunks a test's open file gives
    ours, oracle = ChunkFile(iter(lines)), io.StringIO(text)
    for operation in operations:
        assert apply(ours, operation) == apply(oracle, operation), operation
    assert ours.read() == oracle.read()


# Streams that need a text file, each one id per character: one reads it in blocks, the other
# tells it from other iterables by its type (``io.TextIOBase``, as much code does) and closes it
# with ``with``. A generator is no file: each fails on one alike in-process and isolated.
READS_BLOCKS = """
class Tokenizer:
    def encode_iterable(self, text_file):
        while True:
            block = text_file.read(5)
            if not block:
                return
            yield from (ord(c) for c in block)
"""
TELLS_BY_TYPE = """
import io


class Tokenizer:
    def encode_iterable(self, source):
        if not isinstance(source, io.TextIOBase) or not isinstance(source, io.IOBase):
            raise TypeError(f"expected a text file, got {type(source).__name__}")
        with source:
            while block := source.read(5):
                yield from (ord(c) for c in block)
        assert source.closed
"""
GET_TOKENIZER = """

def get_tokenizer(vocab, merges, special_tokens=None):
    return Tokenizer()
"""
STREAMS = {"reads_blocks": (READS_BLOCKS, AttributeError), "tells_by_type": (TELLS_BY_TYPE, TypeError)}


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
@pytest.mark.parametrize("stream", STREAMS)
def test_an_encode_iterable_needing_an_open_file_gets_its_text(tmp_path, stream, isolate):
    code, not_a_file = STREAMS[stream]
    sub = adapters_only(tmp_path / "sub", code + GET_TOKENIZER)
    text = "first line\nsecond, longer line\n\nlast"
    (tmp_path / "text.txt").write_text(text)
    with implementation_of(sub, isolate) as impl:
        tok = impl.get_tokenizer({}, [], None)
        with open(tmp_path / "text.txt", encoding="utf-8") as f:
            assert list(tok.encode_iterable(f)) == [ord(c) for c in text]
        with pytest.raises(not_a_file):
            list(tok.encode_iterable(iter(text.splitlines(keepends=True))))
