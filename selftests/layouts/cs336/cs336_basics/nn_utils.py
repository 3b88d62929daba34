"""Another part of the course, imported by the package at import time (selftest fixture):
it needs torch, which the grading environment may lack; the tokenizer never uses it."""

import torch
from torch import nn


class Linear(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_out, d_in))


def linear(weights, x):
    return x @ weights.T
