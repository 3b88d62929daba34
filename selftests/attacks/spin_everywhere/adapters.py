"""Every adapter spins forever and swallows every exception (SystemExit, KeyboardInterrupt...):
the classic infinite loop, made hostile. Only the worker's call deadline (or the test's) ends a
call; the circuit breaker stops calling each function after a few tests, the time budget
bounds the rest."""


def _spin(*args, **kwargs):
    while True:
        try:
            while True:
                pass
        except BaseException:
            continue


get_character_tokenizer = get_byte_tokenizer = get_word_tokenizer = _spin
run_compression_ratio = run_get_pair_counts = run_merge = _spin
run_pretokenize = run_split_on_special_tokens = run_train_bpe = _spin
get_tokenizer = get_tokenizer_from_files = run_save_tokenizer = _spin
