"""Collateral points: what each catalogued bug costs outside the tests of its own rule.

A test should lose points only for the rule it names. For every mutant of the catalogue,
``python -m mutants.collateral`` grades it (in-process, ``grade --no-isolate``, no diagnosis)
on every test file that can reach its edited code (:func:`affected_tests`: the reference
modules importing the edited one, and the test files of their parts; the others cannot lose
points) and splits the points it loses into

* **own rule**: entries whose test states the mutant's rule (:data:`RULES`, globs over test
  function names), or checks the whole graded function against an oracle or hand-worked
  examples (:data:`WHOLE_FUNCTION`: any bug of the function is theirs); in Part 5a, only
  tests of the function the mutant breaks (:func:`checks`: encode tests for an ``encode_*``
  bug, decode tests for a ``decode_*`` one), so a decode bug failing an encode-vs-tiktoken
  test is collateral;
* **later parts**: tests of other groups, whose functions call the buggy one in the
  submission itself (its training uses its own pre-tokenizer): the bug is in their result too;
* **speed**: the speed tests, which score only a correct result (their rule: correct *and*
  fast), shown apart;
* **collateral**: tests of the mutant's own group that state another rule, named in the table.

``--out DIR`` keeps each mutant's results.json (re-used with ``--from DIR``); the table
(Markdown) is printed and written to ``mutants/COLLATERAL.md`` with ``--write``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.request import GradeRequest
from harness.childenv import child_env

from .build import build
from .catalogue import CATALOGUE, Mutant

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "mutants" / "COLLATERAL.md"

# tests of a whole function against an oracle, the reference or hand-worked examples: every
# bug of that function is theirs to catch (by group)
WHOLE_FUNCTION: dict[str, tuple[str, ...]] = {
    "warmup": (),
    "primitives": ("*primitives_compose*", "*bpe_step*"),
    "pretokenize": (),
    "train_bpe": ("*hand_worked*", "*match*naive*", "*match*reference*", "*fixture_text_gives*", "*training_matches*"),
    "tokenizer": ("*tiktoken*", "*decode_of_encode*", "*matches_reference*", "*merges_apply_by_rank*", "*round_trip*",
                  "*first_1000*", "*merge_prefixes*"),
    "encode_iterable": ("*encode_iterable*",),
    "speed": ("*speed*",),
}

BYTE, WORD, RATIO = ("test_byte_*",), ("test_word_*",), ("*compression_ratio*",)
PAIR_COUNTS, MERGE = ("*pair_counts*",), ("*merge*",)
PATTERN = ("*pretokeniz*", "*pretokens*")
SPLIT = ("*split*", "*special*", "*pieces*", "*endoftext*", "*one_piece*")
ENCODE_SPECIALS = ("*special*", "*endoftext*")
FILES = ("*save*", "*saving*", "*load*", "*file*", "*vocab_json*", "*merges_txt*", "*line*", "*gpt2_table*", "*gpt2_byte*")

# the tests stating each mutant's own rule (globs over test function names)
RULES: dict[str, tuple[str, ...]] = {
    "byte_decode_strict": BYTE, "byte_encode_code_points": BYTE, "byte_decode_builtin_error": BYTE + ("*bad_id*", "*decode_error*"),
    "word_ids_sorted": WORD, "word_split_on_whitespace": WORD,
    "compression_ratio_inverted": RATIO + ("*ratio*",), "compression_ratio_characters": RATIO + ("*ratio*",),
    "pair_counts_non_overlapping": PAIR_COUNTS, "pair_counts_presence_only": PAIR_COUNTS,
    "merge_overlapping": MERGE, "merge_right_to_left": MERGE, "merge_drops_last": MERGE,
    "pattern_re_word_class": PATTERN, "pattern_missing_trailing_space_branch": PATTERN,
    "pattern_contractions_ignore_case": PATTERN, "pattern_digits_without_space": PATTERN,
    "specials_not_escaped": SPLIT, "specials_shortest_first": SPLIT, "split_drops_special_tokens": SPLIT,
    "split_keeps_empty_pieces": SPLIT,
    "ties_smallest_pair": ("*tie*",), "ties_first_seen": ("*tie*",), "ties_by_token_ids": ("*tie*",),
    "ties_by_concatenation": ("*tie*",),
    "merges_cross_pretokens": ("*pretoken*", "*boundar*"),
    "specials_left_in_training_text": ("*special_tokens_are*",),
    "specials_deleted_not_boundaries": ("*special_tokens_are*",),
    "pairs_not_weighted_by_frequency": ("*weighted*",),
    "counts_not_updated_after_merge": ("*pair_counts*",),
    "pair_between_occurrences_subtracted_twice": ("*pair_counts*",),
    "one_merge_too_many": ("*vocab_size*", "*vocab_layout*", "*stops_early*"),
    "training_merges_first_occurrence_only": ("*pair_counts*",),
    "zero_count_pairs_merged": ("*stops_early*",),
    "vocab_size_ignores_specials": ("*vocab_size*", "*vocab_layout*"),
    "repeated_specials_not_deduplicated": ("*repeated_special*",),
    "specials_numbered_first": ("*vocab_layout*",),
    "vocab_only_seen_bytes": ("*vocab*", "*bytes_and_specials*"),
    "crlf_translated": ("*crlf*",),
    "pretokens_as_code_points": ("*non_ascii*", "*ties_go_to*"),
    "training_merge_overlapping": ("*overlapping*",),
    "encode_merges_in_sorted_order": ("*rank*", "*merge*"), "encode_first_mergeable_pair": ("*rank*", "*merge*"),
    "encode_greedy_longest_match": ("*rank*", "*merge*"), "encode_whole_pretoken_from_vocab": ("*rank*", "*merge*"),
    "encode_across_pretokens": ("*pretoken*",),
    "encode_cache_shared_by_tokenizers": ("*own_merges*",),
    "encode_ignores_special_tokens": ENCODE_SPECIALS, "encode_specials_shortest_first": ENCODE_SPECIALS,
    "encode_specials_not_escaped": ENCODE_SPECIALS, "specials_not_added_to_vocab": ENCODE_SPECIALS,
    "decode_strict_utf8": ("*decode*",), "decode_token_by_token": ("*decode*",), "decode_ignores_invalid_bytes": ("*decode*",),
    "tokenizer_accepts_missing_bytes": ("*single_byte*",), "tokenizer_accepts_unknown_merges": ("*merge_using_bytes*",),
    "tokenizer_accepts_empty_special": ("*empty_special*",), "duplicate_bytes_first_id": ("*several_ids*",),
    "repeated_merge_last_rank": ("*repeated_merge*",), "special_ids_from_vocab_length": ("*special*",),
    "save_ascii_escaped": FILES, "save_vocab_in_given_order": FILES, "save_merges_without_final_newline": FILES,
    "save_accepts_duplicate_bytes": FILES + ("*duplicate*",), "load_skips_malformed_lines": FILES + ("*malformed*", "*empty_part*"),
    "load_keeps_carriage_returns": FILES, "load_always_skips_first_line": FILES, "load_skips_hash_lines": FILES, "load_drops_unknown_characters": FILES + ("*outside_gpt2*",),
    "files_without_byte_decoder": FILES, "save_without_byte_encoder": FILES,
    "encode_quadratic_list_concat": ("*speed*",),
    "encode_iterable_joins_everything": ("*encode_iterable*",), "encode_iterable_chunks_independently": ("*encode_iterable*",),
    "encode_iterable_strips_newlines": ("*encode_iterable*",),
}


def checks(test: str) -> set[str]:
    """The functions of Part 5a's tokenizer a test checks, read from the verb of its name (the
    suite names a test by its rule): a name saying ``decode`` checks decode; one saying
    ``encode`` too (``decode_of_encode``) or ``round_trip`` checks both; any other checks
    encode, whose ids it compares (with tiktoken's, the reference's or hand-worked ones), so
    ``test_random_strings_match_tiktoken`` is encode's and
    ``test_decode_of_tiktoken_ids_of_random_strings_gives_the_strings`` decode's."""
    if "round_trip" in test or ("decode" in test and "encode" in test):
        return {"encode", "decode"}
    return {"decode"} if "decode" in test else {"encode"}


def broken_function(mutant: Mutant) -> str | None:
    """The tokenizer function a Part 5a mutant breaks, by the catalogue's naming: ``encode_*``
    and ``decode_*``; None for the others (the constructor's tables, which encode and decode
    both use, and the files), whose own tests are not narrowed by function."""
    verb = mutant.name.split("_")[0]
    return verb if mutant.group == "tokenizer" and verb in ("encode", "decode") else None


def test_function(key: str) -> str:
    """``tests/x.py::test_f[case]`` -> ``test_f``."""
    return key.split("::")[-1].split("[")[0]


def classify(mutant: Mutant, results: dict) -> dict:
    """Points lost, split: own rule, speed, later parts (tests of other groups, whose code
    calls the buggy function: the submission's own Part 4 uses its Part 3) and collateral
    (tests of its group stating another rule)."""
    own_globs = RULES.get(mutant.name, ()) + WHOLE_FUNCTION.get(mutant.group, ())
    function = broken_function(mutant)
    out = {"lost": 0.0, "own": 0.0, "speed": 0.0, "later": 0.0, "collateral": 0.0, "entries": []}
    for t in results.get("tests", []):
        lost = round(t["max_score"] - t["score"], 2)
        if lost <= 0:
            continue
        name = test_function(t.get("extra_data", {}).get("test", ""))
        group = (t.get("tags") or [""])[0]
        out["lost"] += lost
        own = any(fnmatch.fnmatchcase(name, g) for g in own_globs) and (function is None or function in checks(name))
        if group == mutant.group and (mutant.group == "speed" or own):
            out["own"] += lost
        elif group == "speed":
            out["speed"] += lost
        elif group != mutant.group:
            out["later"] += lost
        else:
            out["collateral"] += lost
            out["entries"].append(f"{t.get('number', '')} {name} (-{lost:g})")
    return out


# the test files that can call each reference module's code (through adapters.py)
FILES_OF_MODULE = {
    "warmup": ("warmup",), "primitives": ("primitives",), "pretokenize": ("pretokenize", "special_tokens"),
    "train": ("train_bpe", "speed"), "tokenizer": ("tokenizer", "tiktoken_agreement", "encode_iterable", "speed"),
    "gpt2_files": ("tokenizer",),
}


def importers(module: str) -> set[str]:
    """``module`` and every reference module importing it, directly or not (``__init__``
    aside: adapters.py calls each function through it)."""
    imports = {p.stem: set(re.findall(r"^\s*from \.(\w+) import", p.read_text(encoding="utf-8"), re.M))
               for p in (ROOT / "reference").glob("*.py") if p.stem != "__init__"}
    found, todo = {module}, [module]
    while todo:
        m = todo.pop()
        for other, names in imports.items():
            if m in names and other not in found:
                found.add(other)
                todo.append(other)
    return found


def affected_tests(mutant: Mutant) -> list[str]:
    """The test files that can reach the mutant's edited code: only there can it lose points."""
    stems = {s for e in mutant.edits for m in importers(Path(e.file).stem) for s in FILES_OF_MODULE.get(m, ())}
    return sorted(str(p.relative_to(ROOT)) for stem in stems for p in ROOT.glob(f"tests/*/test_{stem}*.py"))


def grade_mutant(mutant: Mutant, where: Path) -> dict:
    results = where / f"{mutant.name}.json"
    if not results.is_file():
        sub = build(mutant, where / mutant.name)
        env = child_env(BPE_DIAGNOSIS="0")
        subprocess.run(
            GradeRequest(submission=sub, isolate=False, self_checked=True, quiet=True, results=results,
                         tests=tuple(affected_tests(mutant))).argv(),
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL,
        )
        shutil.rmtree(sub, ignore_errors=True)
    return json.loads(results.read_text(encoding="utf-8"))


def table(rows: list[tuple[Mutant, dict]]) -> str:
    lines = [
        "| mutant | group | points lost | own rule | later parts | speed | collateral | collateral entries |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for m, c in rows:
        lines.append(f"| {m.name} | {m.group} | {c['lost']:.2f} | {c['own']:.2f} | {c['later']:.2f} | {c['speed']:.2f} | "
                     f"{c['collateral']:.2f} | {'; '.join(c['entries']) or '-'} |")
    total = sum(c["collateral"] for _, c in rows)
    hit = sum(1 for _, c in rows if c["collateral"] > 0)
    lines.append("")
    lines.append(f"{len(rows)} mutants; collateral points in all: {total:.2f}; mutants with any collateral: {hit}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutants.collateral", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="mutants (default: the whole catalogue)")
    parser.add_argument("--out", type=Path, help="keep each mutant's results.json here")
    parser.add_argument("--from", dest="source", type=Path, help="use the results.json files already in this folder")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true", help=f"write the table to {REPORT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    mutants = [m for m in CATALOGUE if not args.names or m.name in args.names]
    if args.source is not None:
        results = {m.name: json.loads((args.source / f"{m.name}.json").read_text(encoding="utf-8")) for m in mutants
                   if (args.source / f"{m.name}.json").is_file()}
    else:
        with tempfile.TemporaryDirectory(prefix="bpe-collateral-") as tmp:
            where = args.out or Path(tmp)
            where.mkdir(parents=True, exist_ok=True)
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                futures = {m.name: pool.submit(grade_mutant, m, where) for m in mutants}
                results = {name: f.result() for name, f in futures.items()}
    rows = [(m, classify(m, results[m.name])) for m in mutants if m.name in results]
    text = table(rows)
    print(text)
    if args.write:
        REPORT.write_text(
            "# Collateral points of the mutant catalogue\n\n"
            "Written by `python -m mutants.collateral --write` (see its docstring): for each catalogued bug, the\n"
            "points it loses on the whole suite, split into its own rule's tests, the speed tests (which score\n"
            "only correct results) and collateral: points lost in tests of other rules.\n\n" + text + "\n\n"
            "What collateral remains, and why: Part 4's tests of one rule compare only the merges their rule\n"
            "decides, on corpora where no tie or earlier merge decides them; the two tie cases between merged\n"
            "tokens (a prefix, ids against bytes) need the merges before the tie applied and counted right,\n"
            "so the counting bugs lose a case there, and merging overlapping occurrences also changes the\n"
            "second merge of the pair-count test and never leaves training without a pair (the early-stop\n"
            "test). Part 5's special-token tests check where the specials go apart from how the text between\n"
            "them is merged (its ids need only spell it), and test_loading_saved_files_gives_the_same_ids\n"
            "compares the loaded tokenizer with the one saved: an encoding bug of ordinary text loses nothing\n"
            "there, nor in the caller's-vocab test, whose encode of a special may fail. In Part 5a a test is\n"
            "a bug's own only if it checks the function the bug breaks (encode's ids, decode's text: read\n"
            "from its name); the decode tests of new special tokens decode the ids the rule gives, not\n"
            "encode's. The rejection tests of training, once charged for every training bug, lose nothing now.\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
