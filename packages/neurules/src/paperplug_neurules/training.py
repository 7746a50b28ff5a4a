"""Stage 4 (cont.): the training loop — CE + λ·support penalty, Adam, one step per batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from paperplug import History
from paperplug_neurules.network import NeuralRuleList
from paperplug_neurules.ordering import support_penalty
from paperplug_neurules.schedule import annealed, batch_rows, heads_frozen


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

    def rows(self, n_rows: int) -> int:
        """Rows per batch for a training set of `n_rows`."""
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
    logits, _, rules = net(x, selector_temp, generator)
    ce = (F.cross_entropy(logits, y, reduction="none") * weight).sum() / weight.sum()
    penalty = support_penalty(rules, min_support, weight)
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
    history = History()
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    n = x.shape[0]
    weight = torch.ones(n) if weight is None else weight
    n_epochs, rows = config.n_epochs, config.rows(n)
    for epoch in range(n_epochs):
        t_pi = annealed(config.predicate_temp, epoch, n_epochs, config.anneal_factor)
        t_sel = annealed(config.selector_temp, epoch, n_epochs, config.anneal_factor)
        net.predicates.temperature = t_pi
        totals, skipped = torch.zeros(3), 0
        for batch in torch.randperm(n, generator=generator).split(rows):
            optimizer.zero_grad()
            terms = objective(
                net,
                x[batch],
                y[batch],
                weight[batch],
                selector_temp=t_sel,
                min_support=config.min_support,
                lambda_support=config.lambda_support,
                generator=generator,
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
