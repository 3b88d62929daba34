"""Which of a submission's folders the layout line names as the code graded: the package its
adapters file imports (``cs336_basics/``, ``student/``, ``mycode/``), not the other folders a
course repository holds beside it (``scripts/`` of helper scripts, with or without an
``__init__.py``, ``data/``, ``docs/``); when the adapters name none, the candidates."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.submission import detect_layout

from .support import build_layout

HELPERS = {  # what CS336 repositories keep beside their package
    "scripts/train_tinystories.py": "from cs336_basics.train_bpe import train_bpe\n",
    "scripts/profile_tokenizer.py": "import time\n",
    "data/download.py": "import urllib.request\n",
    "docs/conf.py": "project = 'bpe'\n",
}

EXPECTED = {
    "cs336": "CS336 layout (tests/adapters.py, package cs336_basics/)",
    "stubs": "stubs layout (adapters.py, package student/)",
    "own": "own package layout (adapters.py, package mycode/)",
}


def with_helpers(root: Path, init: bool) -> Path:
    for rel, text in HELPERS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if init:
        (root / "scripts" / "__init__.py").write_text("")
    return root


@pytest.mark.parametrize("init", [False, True], ids=["scripts", "scripts_package"])
@pytest.mark.parametrize("layout", list(EXPECTED))
def test_helper_folders_beside_the_package_are_not_named_as_the_graded_package(tmp_path, layout, init):
    root = with_helpers(build_layout(layout, tmp_path / "sub"), init)
    assert detect_layout(root).describe() == EXPECTED[layout]


def files(root: Path, tree: dict[str, str]) -> Path:
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_an_adapters_file_with_all_the_code_and_a_scripts_folder_is_adapters_only(tmp_path):
    root = files(tmp_path, {"adapters.py": "def run_merge(ids, pair, new_id):\n    return ids\n",
                            "scripts/__init__.py": "", "scripts/plot.py": ""})
    layout = detect_layout(root)
    assert (layout.kind, layout.describe()) == ("adapters only", "adapters only layout (adapters.py)")


def test_a_package_the_adapters_import_is_named_even_under_a_helper_name(tmp_path):
    root = files(tmp_path, {"adapters.py": "from tools.bpe import merge\n", "tools/__init__.py": "", "tools/bpe.py": "",
                            "scripts/run.py": ""})
    assert detect_layout(root).describe() == "own package layout (adapters.py, package tools/)"


def test_a_module_beside_the_adapters_is_named_when_they_import_it(tmp_path):
    root = files(tmp_path, {"adapters.py": "import bpe\n", "bpe.py": "", "scripts/run.py": ""})
    assert detect_layout(root).describe() == "own package layout (adapters.py, module bpe.py)"


def test_a_src_layout_package_is_named_with_its_folder(tmp_path):
    root = files(tmp_path, {"tests/adapters.py": "from cs336_basics.bpe import Tokenizer\n",
                            "src/cs336_basics/__init__.py": "", "src/cs336_basics/bpe.py": "", "scripts/run.py": ""})
    assert detect_layout(root).describe() == "CS336 layout (tests/adapters.py, package src/cs336_basics/)"


def test_adapters_naming_no_folder_name_the_candidates(tmp_path):
    root = files(tmp_path, {"adapters.py": "import importlib\n_impl = importlib.import_module(NAME)\n",
                            "bpe_a/__init__.py": "", "bpe_b/__init__.py": "", "scripts/run.py": ""})
    assert detect_layout(root).describe() == (
        "own package layout (adapters.py, which imports none of its folders by name: candidates bpe_a/, bpe_b/)"
    )
