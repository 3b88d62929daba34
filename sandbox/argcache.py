"""Arguments of calls into a worker: large ones sent once and then referenced (GPT-2's
vocabulary and merges go to every tokenizer made from them), and the changes a call made to
its list or dict arguments applied to the caller's own (:func:`change_in_place`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from harness.wire import packed_whole

from .channel import fast_dumps, plain_copy

REF_MIN = 2000  # lists/dicts at least this long are sent once per worker and then referenced
REF_SLOTS = 32  # at most this many of them are kept by a worker
ARG_CACHE = 16  # serialized large arguments kept here, by object identity
REF_MAX = 200_000  # longer ones (GPT-2's vocabulary has 50,257 entries) are sent whole each time, never kept
CACHE_ITEMS = 1_000_000  # items of all the arguments kept here together (their copies and texts cost memory)


class Kept(NamedTuple):
    """A large argument serialized: the object, a snapshot of it, its key, its wire text, and
    whether it travels packed whole (:func:`harness.wire.packed_whole`)."""

    value: Any
    snapshot: Any
    key: int
    text: str
    packed: bool


class ArgumentCache:
    """Serialized large arguments of one backend, by object identity (or, for merges and
    vocabularies, by equal data in the same order)."""

    def __init__(self) -> None:
        self.entries: dict[int, Kept] = {}
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
            if entry is None or entry.value is not value or type(entry.snapshot) is not type(value) or entry.snapshot != value:
                packed = packed_whole(value)
                same = self._same_data(value) if packed else None
                if same is None:
                    self.counter += 1
                    entry = Kept(value, plain_copy(value), self.counter, fast_dumps(value), packed)
                else:
                    entry = Kept(value, *same[1:])  # the same data, kept under this object too
                self.entries.pop(id(value), None)
                self.entries[id(value)] = entry
                while len(self.entries) > ARG_CACHE or (
                    len(self.entries) > 1 and sum(len(e.snapshot) for e in self.entries.values()) > CACHE_ITEMS
                ):
                    self.entries.pop(next(iter(self.entries)))
            key, text = entry.key, entry.text
            if key in sent_keys:
                refs.append(f"[{i},{key},null]")
            elif len(sent_keys) < REF_SLOTS:
                sent_keys.add(key)
                refs.append(f"[{i},{key},{text}]")
            else:
                continue
            args[i] = None
        return args, refs

    def _same_data(self, value: list | dict) -> Kept | None:
        """A kept entry whose snapshot holds the same merges or vocabulary as ``value`` (packed
        whole, :func:`harness.wire.packed_whole`), in the same order: another object, such as a
        copy of GPT-2's vocabulary a test made again, whose wire text, and the worker's copy of
        it, serve ``value`` too. None if none."""
        for entry in reversed(self.entries.values()):
            kept = entry.snapshot
            if entry.packed and type(kept) is type(value) and len(kept) == len(value) and kept == value and (
                    type(value) is list or list(kept) == list(value)):
                return entry
        return None


def change_in_place(originals: list, changed: Any, proc: Any) -> None:
    """The caller's list or dict arguments changed as the submission changed its copies in the
    worker (``changed``: ``[position, new value]`` pairs): the same outcome as in-process."""
    if type(changed) is not list:
        raise proc.violation("sent changed arguments that are not a list")
    for entry in changed:
        if not (type(entry) is list and len(entry) == 2 and type(entry[0]) is int and 0 <= entry[0] < len(originals)):
            raise proc.violation("sent a changed argument for no argument given")
        position, value = entry
        original = originals[position]
        if type(original) is not type(value) or type(original) not in (list, dict):
            raise proc.violation(f"sent a changed argument {position + 1} of another type")
        if type(original) is list:
            original[:] = value
        else:
            original.clear()
            original.update(value)
