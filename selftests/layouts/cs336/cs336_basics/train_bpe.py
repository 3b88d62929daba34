"""Training under the module name CS336 repositories often use (selftest fixture)."""

from .train import train_bpe  # noqa: F401
