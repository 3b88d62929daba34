"""Spins in every adapter with every catchable signal ignored and blocked (SIGALRM, which
pytest-timeout's signal method uses; SIGTERM, SIGINT, SIGXCPU...), swallowing every exception.
Only the trusted side's deadlines end it: a SIGKILL of its worker."""
import signal

SIGNALS = [s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD)]


def _deaf():
    for sig in SIGNALS:
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError, RuntimeError):
            pass
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


_deaf()


def _spin(*args, **kwargs):
    while True:
        try:
            _deaf()
            while True:
                pass
        except BaseException:
            continue


get_character_tokenizer = get_byte_tokenizer = get_word_tokenizer = _spin
run_compression_ratio = run_get_pair_counts = run_merge = _spin
run_pretokenize = run_split_on_special_tokens = run_train_bpe = _spin
get_tokenizer = get_tokenizer_from_files = run_save_tokenizer = _spin
