"""Stage 4 (cont.): the training loop — CE + λ·support penalty, Adam, one step per batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from paperplug import History
from paperplug_neurules.network import NeuralRuleList
from paperplug_neurules.ordering import support_penalty
from paperplug_neurules.schedule import annealed, heads_frozen


@dataclass(frozen=True)
class TrainingConfig:
    """Defaults of the official `run_method.py` (500 epochs, Adam 0.01, batch 2048, ...)."""

    n_epochs: int = 500
    lr: float = 0.01
    batch_size: int = 2048
    min_support: float = 0.2
    lambda_support: float = 0.4
    predicate_temp: float = 0.2
    selector_temp: float = 1.0
    anneal_factor: float = 5.0


def train_rule_list(
    net: NeuralRuleList,
    x: torch.Tensor,
    y: torch.Tensor,
    config: TrainingConfig,
    generator: torch.Generator,
    on_epoch: Callable[[int, dict[str, float]], None] | None = None,
) -> History:
    """Fit `net` on standardised `x` (n, d) and class indices `y` (n,); returns the history.

    Unlike the official loop, the optimiser steps once per batch (it stepped twice).
    """
    history = History()
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    n = x.shape[0]
    for epoch in range(config.n_epochs):
        t_pi = annealed(config.predicate_temp, epoch, config.n_epochs, config.anneal_factor)
        t_sel = annealed(config.selector_temp, epoch, config.n_epochs, config.anneal_factor)
        net.predicates.temperature = t_pi
        totals, skipped = torch.zeros(3), 0
        for batch in torch.randperm(n, generator=generator).split(config.batch_size):
            optimizer.zero_grad()
            logits, selection = net(x[batch], t_sel, generator)
            ce = F.cross_entropy(logits, y[batch])
            penalty = support_penalty(selection, config.min_support)
            loss = ce + config.lambda_support * penalty
            if not torch.isfinite(
                loss
            ):  # ε = 0 can divide by a zero predicate: skip, as the official code does
                skipped += 1
                continue
            loss.backward()
            if heads_frozen(epoch, config.n_epochs):
                net.selector.heads.grad = None
            optimizer.step()
            net.predicates.sort_cut_points()
            totals += torch.tensor([loss.item(), ce.item(), penalty.item()]) * len(batch) / n
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
