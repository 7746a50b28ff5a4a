"""Stage 4 (cont.): the training loop — CE + λ·support penalty, Adam, one step per batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from paperplug import History
from paperplug.checks import (
    check_callable,
    check_consistent_length,
    check_float_tensor,
    check_scalar,
    check_type,
)
from paperplug_neurules.network import NeuralRuleList
from paperplug_neurules.ordering import _support_penalty
from paperplug_neurules.schedule import annealed, batch_rows, heads_frozen
from paperplug_neurules.validation import (
    check_class_indices,
    check_generator,
    check_weight,
)


@dataclass(frozen=True)
class TrainingConfig:
    """Defaults of the official `run_method.py` (500 epochs, heads frozen for the first half,
    temperatures 0.2 and 1 annealed to 1/5), except three, measured in the README: lr 0.02
    with one Adam step per batch (the official loop steps twice with lr 0.01), min_support 0
    (the official penalty is constant at its defaults; this package's active form at 0.2
    costs accuracy with many classes) and `batch_size=None`, which sizes batches for at least
    `min_steps` optimiser steps (`batch_rows`, at most the official 2048 rows)."""

    n_epochs: int = 500
    lr: float = 0.02
    batch_size: int | None = None
    min_steps: int = 1000
    min_support: float = 0.0
    lambda_support: float = 0.4
    predicate_temp: float = 0.2
    selector_temp: float = 1.0
    anneal_factor: float = 5.0
    freeze_heads: float = 0.5

    def __post_init__(self) -> None:
        check_scalar(self.n_epochs, "n_epochs", "int", low=1)
        check_scalar(self.batch_size, "batch_size", "int", low=1, allow_none=True)
        check_scalar(self.min_steps, "min_steps", "int", low=1)
        for name in ("lr", "predicate_temp", "selector_temp"):
            check_scalar(getattr(self, name), name, low=0, inclusive="neither")
        check_scalar(self.min_support, "min_support", low=0, high=1)
        check_scalar(self.lambda_support, "lambda_support", low=0)
        check_scalar(self.anneal_factor, "anneal_factor", low=1)
        check_scalar(self.freeze_heads, "freeze_heads", low=0, high=1)

    def rows(self, n_rows: int) -> int:
        """Rows per batch for a training set of `n_rows`."""
        check_scalar(n_rows, "n_rows", "int", low=1)
        return self.batch_size or batch_rows(n_rows, self.n_epochs, self.min_steps)


def objective(
    net: NeuralRuleList,
    x: torch.Tensor,
    y: torch.Tensor,
    weight: torch.Tensor,
    *,
    selector_temp: float,
    min_support: float,
    lambda_support: float,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, CE, support penalty) on a batch: the weighted mean cross-entropy plus λ times the
    support penalty on the rules' weighted supports; integer weights equal repeated rows.
    generator=None: no Gumbel noise."""
    weight = _check_batch(net, x, y, weight)
    check_scalar(selector_temp, "selector_temp", low=0, inclusive="neither")
    check_scalar(min_support, "min_support", low=0, high=1)
    check_scalar(lambda_support, "lambda_support", low=0)
    if generator is not None:
        check_generator(generator)
    return _objective(net, x, y, weight, selector_temp, min_support, lambda_support, generator)


def _check_batch(
    net: NeuralRuleList, x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor | None
) -> torch.Tensor:
    """Row weights (ones for None) once `net`, `x`, `y` and `weight` are checked to fit."""
    check_type(net, "net", NeuralRuleList)
    n_classes, n_features = net.selector.heads.shape[0], net.predicates.alpha.shape[1]
    check_float_tensor(x, "x", shape=(None, n_features))
    check_type(y, "y", torch.Tensor)
    check_class_indices(y, "y", len(y), n_classes)
    check_consistent_length(x=x, y=y)
    if weight is None:
        return torch.ones(len(x))
    check_type(weight, "weight", torch.Tensor)
    check_weight(weight, "weight", len(x))
    return weight


def _objective(
    net: NeuralRuleList,
    x: torch.Tensor,
    y: torch.Tensor,
    weight: torch.Tensor,
    selector_temp: float,
    min_support: float,
    lambda_support: float,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    logits, _, rules = net(x, selector_temp, generator)
    ce = (F.cross_entropy(logits, y, reduction="none") * weight).sum() / weight.sum()
    penalty = _support_penalty(rules, min_support, weight)
    return ce + lambda_support * penalty, ce, penalty


def train_rule_list(
    net: NeuralRuleList,
    x: torch.Tensor,
    y: torch.Tensor,
    config: TrainingConfig,
    generator: torch.Generator,
    weight: torch.Tensor | None = None,
    on_epoch: Callable[[int, dict[str, float]], None] | None = None,
) -> History:
    """Fit `net` on standardised `x` (n, d), class indices `y` (n,) and row weights (n,);
    returns the history. Unlike the official loop, the optimiser steps once per batch (it
    stepped twice)."""
    weight = _check_batch(net, x, y, weight)
    check_type(config, "config", TrainingConfig)
    check_generator(generator)
    if on_epoch is not None:
        check_callable(on_epoch, "on_epoch")
    history = History()
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    n = x.shape[0]
    n_epochs, rows = config.n_epochs, config.rows(n)
    for epoch in range(n_epochs):
        t_pi = annealed(config.predicate_temp, epoch, n_epochs, config.anneal_factor)
        t_sel = annealed(config.selector_temp, epoch, n_epochs, config.anneal_factor)
        net.predicates.temperature = t_pi
        totals, skipped = torch.zeros(3), 0
        for batch in torch.randperm(n, generator=generator).split(rows):
            optimizer.zero_grad()
            terms = _objective(
                net,
                x[batch],
                y[batch],
                weight[batch],
                t_sel,
                config.min_support,
                config.lambda_support,
                generator,
            )
            if not torch.isfinite(terms[0]):  # ε = 0 can divide by a zero predicate: skip
                skipped += 1
                continue
            terms[0].backward()
            if heads_frozen(epoch, n_epochs, config.freeze_heads):
                net.selector.heads.grad = None
            optimizer.step()
            net.predicates.sort_cut_points()
            totals += torch.tensor([t.item() for t in terms]) * float(weight[batch].sum()) / n
        record = dict(zip(("loss", "ce", "support_penalty"), totals.tolist(), strict=True))
        record |= {
            "epoch": epoch,
            "predicate_temp": t_pi,
            "selector_temp": t_sel,
            "skipped_steps": skipped,
        }
        history.log(**record)
        if on_epoch is not None:
            on_epoch(epoch, record)
    return history
