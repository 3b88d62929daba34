"""Returns values as large as the per-reply caps let through from every adapter and method:
1.95 million ids (distinct ints, so none is shared) from encode, 5 million from merge (over the
cap of 2 million values a reply: refused), 1.95 million short strings from pre-tokenization and
splitting, a 600,000-entry vocabulary with 350,000 merges from training, a pair-count dict of
600,000 entries, a 60-million-character string from decode, and files of 200 MB from saving.
Nothing is right; the grader's own memory over a grading must stay under a fixed budget."""

IDS = 1_950_000


def _ids(seed=0, n=IDS):
    return list(range(100_000 + seed, 100_000 + seed + n))


class Huge:
    def __init__(self, *args, **kwargs):
        pass

    def encode(self, text):
        return _ids(len(text))

    def decode(self, ids):
        return "x" * 60_000_000

    def encode_iterable(self, iterable):
        n = 0
        for chunk in iterable:
            for _ in range(len(chunk.encode("utf-8"))):
                n += 1
                yield 100_000 + n


def get_character_tokenizer():
    return Huge()


def get_byte_tokenizer():
    return Huge()


def get_word_tokenizer(training_text):
    return Huge()


def run_compression_ratio(text, ids):
    return 1e300


def run_get_pair_counts(ids):
    return {(100_000 + i, 100_001 + i): i for i in range(600_000)}


def run_merge(ids, pair, new_id):
    return _ids(new_id, 5_000_000)


def run_pretokenize(text):
    return [str(i % 10) for i in range(1_950_000)]


def run_split_on_special_tokens(text, special_tokens):
    return [chr(0x100 + i % 5000) for i in range(1_950_000)]


def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
    vocab = {i: i.to_bytes(4, "big") for i in range(600_000)}
    merges = [(i.to_bytes(3, "big"), b"x") for i in range(350_000)]
    return vocab, merges


def get_tokenizer(vocab, merges, special_tokens=None):
    return Huge()


def get_tokenizer_from_files(vocab_path, merges_path, special_tokens=None):
    return Huge()


def run_save_tokenizer(vocab, merges, vocab_path, merges_path):
    entry = b'"' + b"a" * 6 + b'": 1, '
    for path in (vocab_path, merges_path):
        with open(path, "wb") as f:
            f.write(b"{")
            f.write(entry * (200_000_000 // len(entry)))
            f.write(b'"z": 0}')
