"""``forbidden_modules``: libraries a submission may not hand the assignment's work to.

``grading.yaml`` names them (default :data:`FORBIDDEN_MODULES`, declared here only). :func:`sandbox.isolation.backend_for`
hands the session's list (:func:`sandbox.isolation.forbidden_for`: the grading policy's, from
the pytest stash) to every worker, where two layers keep the modules out: their files are absent from the
worker's private root (covered by empty mounts, :func:`sandbox.confine.confine`), and an import
hook refuses the names (:func:`sandbox.imports.forbid`), so that a submission importing one
fails that call with "your code uses the forbidden module NAME". The tests and the
reference on the trusted side keep using tiktoken.
"""

from __future__ import annotations

# forbidden_modules' default: libraries that would do the assignment's work (the worker cannot import them)
FORBIDDEN_MODULES = ("tiktoken", "tokenizers", "sentencepiece", "transformers", "rustbpe", "bpeasy")

# libraries known to do a tokenizer's work, installed here or not: ``grading.yaml`` may name
# any of them, and any module installed where grading runs (grader.config checks the names)
TOKENIZER_LIBRARIES = FORBIDDEN_MODULES + (
    "youtokentome", "tokenmonster", "minbpe", "subword_nmt", "fastBPE", "bpemb", "tensorflow_text", "torchtext", "keras_nlp",
)
