"""OpenAI's GPT-2 BPE files through tiktoken's download cache, or one readable line saying
where they were expected when they are neither cached nor downloadable.

tiktoken looks for each file under ``$TIKTOKEN_CACHE_DIR/<sha1 of its address>`` and
downloads it when it is missing; without internet that ends in a long urllib3 traceback
that never names the folder. :func:`read_gpt2_file` and :func:`gpt2_encoding` turn that
case into :class:`GPT2FilesMissing`, whose message is a single line.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

GPT2_URLS = {
    "vocab.json": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    "merges.txt": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
}


class GPT2FilesMissing(RuntimeError):
    """GPT-2's files are neither in tiktoken's cache folder nor downloadable; one line."""


def cache_dir() -> Path | None:
    """The folder tiktoken reads its cache from (None: caching disabled by an empty value)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cache_name(url: str) -> str:
    """The file name tiktoken gives the download of ``url`` in its cache."""
    return hashlib.sha1(url.encode()).hexdigest()


def missing_files() -> list[str]:
    """Cache names of the GPT-2 files absent from :func:`cache_dir`."""
    folder = cache_dir()
    return [cache_name(u) for u in GPT2_URLS.values() if folder is None or not (folder / cache_name(u)).is_file()]


def missing_message(err: BaseException) -> str:
    """The one-line explanation, naming TIKTOKEN_CACHE_DIR and the folder expected."""
    folder = cache_dir()
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        where = f"TIKTOKEN_CACHE_DIR={os.environ['TIKTOKEN_CACHE_DIR']}"
    else:
        where = f"{folder} (TIKTOKEN_CACHE_DIR is not set)"
    names = " and ".join(missing_files())
    return (
        f"GPT-2's BPE files are missing: tiktoken looked in {where} for {names} and could not "
        f"download them ({type(err).__name__}); put OpenAI's encoder.json and vocab.bpe there under "
        f"those names, or set TIKTOKEN_CACHE_DIR to the folder that has them"
    )


def read_gpt2_file(name: str) -> bytes:
    """The bytes of ``"vocab.json"`` or ``"merges.txt"`` (GPT-2's encoder.json / vocab.bpe)."""
    from tiktoken.load import read_file_cached

    try:
        return read_file_cached(GPT2_URLS[name])
    except Exception as err:
        if not missing_files():
            raise
        raise GPT2FilesMissing(missing_message(err)) from None


def gpt2_encoding():
    """``tiktoken.get_encoding("gpt2")``, or :class:`GPT2FilesMissing`."""
    import tiktoken

    try:
        return tiktoken.get_encoding("gpt2")
    except Exception as err:
        if not missing_files():
            raise
        raise GPT2FilesMissing(missing_message(err)) from None


def check() -> str | None:
    """None when GPT-2's files can be had (cached, or downloaded now), else the one line."""
    try:
        for name in GPT2_URLS:
            read_gpt2_file(name)
    except GPT2FilesMissing as err:
        return str(err)
    return None
