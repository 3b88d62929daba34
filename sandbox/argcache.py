"""Large arguments sent to a worker once and then referenced (GPT-2's vocabulary and merges go
to every tokenizer made from them)."""

from __future__ import annotations

from .channel import fast_dumps, plain_copy

REF_MIN = 2000  # lists/dicts at least this long are sent once per worker and then referenced
REF_SLOTS = 32  # at most this many of them are kept by a worker
ARG_CACHE = 16  # serialized large arguments kept here, by object identity
REF_MAX = 200_000  # longer ones (GPT-2's vocabulary has 50,257 entries) are sent whole each time, never kept
CACHE_ITEMS = 1_000_000  # items of all the arguments kept here together (their copies and texts cost memory)


class ArgumentCache:
    """Serialized large arguments of one backend, by object identity."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple] = {}
        self.counter = 0

    def split(self, args: list, sent_keys: set[int]) -> tuple[list, list[str]]:
        """Large list/dict arguments (GPT-2's vocabulary and merges, long texts' ids) are
        serialized once and kept by the worker (``sent_keys``: the keys it holds); later calls
        send a reference. A cached serialization is reused only while the object is still
        equal to a snapshot of it. Returns the arguments (None where referenced) and the
        references as JSON fragments."""
        args, refs = list(args), []
        for i, value in enumerate(args):
            if type(value) not in (list, dict) or len(value) < REF_MIN:
                continue
            if type(value) is list and type(value[0]) is int:
                continue  # ids to decode are rarely sent twice; vocabularies and merges are
            if len(value) > REF_MAX:
                continue  # a submission's own huge result given back: a copy kept here would outlive the test
            entry = self.entries.get(id(value))
            if entry is None or entry[0] is not value or type(entry[1]) is not type(value) or entry[1] != value:
                self.counter += 1
                entry = (value, plain_copy(value), self.counter, fast_dumps(value))
                self.entries.pop(id(value), None)
                self.entries[id(value)] = entry
                while len(self.entries) > ARG_CACHE or (
                    len(self.entries) > 1 and sum(len(e[1]) for e in self.entries.values()) > CACHE_ITEMS
                ):
                    self.entries.pop(next(iter(self.entries)))
            _, _, key, text = entry
            if key in sent_keys:
                refs.append(f"[{i},{key},null]")
            elif len(sent_keys) < REF_SLOTS:
                sent_keys.add(key)
                refs.append(f"[{i},{key},{text}]")
            else:
                continue
            args[i] = None
        return args, refs
