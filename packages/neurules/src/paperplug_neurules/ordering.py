"""Stage 3: differentiable ordering — priorities, the Gumbel-softmax selector and class heads (§3.3)."""

from __future__ import annotations

import torch
from torch import nn

from paperplug.checks import check_float_tensor, check_scalar, check_type
from paperplug_neurules.validation import check_generator, check_weight


def priorities(order: torch.Tensor) -> torch.Tensor:
    """s = o − min(o) + 1 with the min detached: positive priorities, shift-invariant."""
    check_float_tensor(order, "order", ndim=1)
    return order - order.min().detach() + 1


def gumbel_select(
    scores: torch.Tensor, temperature: float, generator: torch.Generator
) -> torch.Tensor:
    """Soft one-hot choice of the active rule: softmax((r⊙s + g)/τ) with Gumbel noise g drawn
    from `generator`."""
    check_float_tensor(scores, "scores", ndim=2)
    check_scalar(temperature, "temperature", low=0, inclusive="neither")
    return _gumbel_select(scores, temperature, check_generator(generator))


def _gumbel_select(
    scores: torch.Tensor, temperature: float, generator: torch.Generator
) -> torch.Tensor:
    u = torch.rand(scores.shape, generator=generator).clamp_(1e-10, 1 - 1e-10)
    return torch.softmax((scores - torch.log(-torch.log(u))) / temperature, dim=-1)


DEFAULT_SCORE = 0.5  # the default rule's score: a firing rule scores >= 1, a failing one 0


class RuleSelector(nn.Module):
    """Learnable rule order o, per-rule class heads H (C × R, no bias) and a default rule.

    The order starts uniform in [0, 1]. The heads start class-partitioned: the rules, in a
    random order, are dealt to the classes in turn, and H[c, j] = `head_init` for rule j's class
    c, 0 elsewhere, so every class has rules pulling for it from the first step (the official
    code keeps this initialisation, at 10, commented out, and runs nn.Linear's default, whose
    logits stay within ±1/√R; heads at 0.5 were measured too flat to steer the rules).
    `default_rule`: an always-true rule with score DEFAULT_SCORE, below every firing rule and
    above every failing one, whose head `default_head` (C) starts at 0; the shipped list ends
    with a default, so the relaxed model has one too (the official code has none).
    """

    def __init__(
        self,
        n_rules: int,
        n_classes: int,
        generator: torch.Generator,
        head_init: float = 10.0,
        default_rule: bool = True,
    ):
        super().__init__()
        check_scalar(n_rules, "n_rules", "int", low=1)
        check_scalar(n_classes, "n_classes", "int", low=2)
        check_scalar(head_init, "head_init", low=0)
        check_type(default_rule, "default_rule", bool, what="True or False")
        check_generator(generator)
        self.order = nn.Parameter(torch.rand(n_rules, generator=generator))
        dealt = torch.randperm(n_rules, generator=generator)  # rule dealt[k] gets class k % C
        heads = torch.zeros(n_classes, n_rules)
        heads[torch.arange(n_rules) % n_classes, dealt] = head_init
        self.heads = nn.Parameter(heads)
        self.default_head = nn.Parameter(torch.zeros(n_classes)) if default_rule else None

    def forward(
        self, rules: torch.Tensor, temperature: float, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """rules (batch, R) -> (logits (batch, C), selection a (batch, R + 1 with the default rule
        last, else R)); Gumbel noise from `generator`, none when it is None (the relaxed model's
        own prediction)."""
        scores = rules * priorities(self.order)
        heads = self.heads
        if self.default_head is not None:  # always true, below every rule's priority
            scores = torch.cat([scores, scores.new_full((len(scores), 1), DEFAULT_SCORE)], dim=1)
            heads = torch.cat([heads, self.default_head[:, None]], dim=1)
        if generator is None:
            selection = torch.softmax(scores / temperature, dim=-1)
        else:
            selection = _gumbel_select(scores, temperature, generator)
        return selection @ heads.T, selection


def support_penalty(
    rules: torch.Tensor, min_support: float, weight: torch.Tensor | None = None
) -> torch.Tensor:
    """mean_j ReLU(min_support − supp_j), supp_j = (weighted) mean over the batch of rule j's soft
    truth r_j: the fraction of rows its conditions hold on, as a rule learner's minimum support.

    The official code puts the selection shares a_j in place of r_j; they sum to 1 over the
    rules, so when every share is below min_support (always so when n_rules·min_support > 1,
    as at its defaults) the penalty is the constant min_support − 1/n_rules, without gradient.
    """
    check_float_tensor(rules, "rules", ndim=2)
    check_scalar(min_support, "min_support", low=0, high=1)
    if weight is not None:
        check_type(weight, "weight", torch.Tensor)
        check_weight(weight, "weight", len(rules))
    return _support_penalty(rules, min_support, weight)


def _support_penalty(
    rules: torch.Tensor, min_support: float, weight: torch.Tensor | None = None
) -> torch.Tensor:
    if weight is None:
        support = rules.mean(dim=0)
    else:
        support = (weight[:, None] * rules).sum(dim=0) / weight.sum()
    return torch.relu(min_support - support).mean()
