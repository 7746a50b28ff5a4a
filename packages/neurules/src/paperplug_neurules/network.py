"""The relaxed rule list: predicates → conjunctions → ordered selection → class heads."""

from __future__ import annotations

import torch
from torch import nn

from paperplug.checks import check_float_tensor, check_scalar
from paperplug_neurules.conjunction import Conjunctions
from paperplug_neurules.ordering import RuleSelector
from paperplug_neurules.predicates import IntervalPredicates


class NeuralRuleList(nn.Module):
    """NeuRules' differentiable model on standardised features (paper Fig. 2); `lower` and
    `upper` are the initial cut points, (rules, features) each (`initial_cut_points`)."""

    def __init__(
        self,
        lower: torch.Tensor,
        upper: torch.Tensor,
        n_classes: int,
        *,
        generator: torch.Generator,
        predicate_temp: float = 0.2,
        eps: float = 1e-3,
        head_init: float = 10.0,
        default_rule: bool = True,
    ):
        super().__init__()
        check_scalar(predicate_temp, "predicate_temp", low=0, inclusive="neither")
        check_scalar(n_classes, "n_classes", "int", low=2)
        n_rules, n_features = check_float_tensor(lower, "lower", ndim=2).shape
        self.predicates = IntervalPredicates(lower, upper, predicate_temp)
        self.conjunctions = Conjunctions(n_rules, n_features, eps)
        self.selector = RuleSelector(n_rules, n_classes, generator, head_init, default_rule)

    def rule_activations(self, x: torch.Tensor) -> torch.Tensor:
        """Soft truth r (batch, rules) of every rule."""
        return self._rules(self.checked_input(x))

    def checked_input(self, x: object) -> torch.Tensor:
        """`x` if it is a finite float tensor (batch, features) of this network's features."""
        return check_float_tensor(x, "x", ndim=2, shape=(None, self.predicates.alpha.shape[1]))

    def _rules(self, x: torch.Tensor) -> torch.Tensor:
        return self.conjunctions(self.predicates(x))

    def forward(
        self, x: torch.Tensor, selector_temp: float, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Training pass: logits (batch, C), selection a (batch, R) and rule truths r (batch, R);
        Gumbel noise drawn from `generator`, none when it is None."""
        rules = self._rules(x)
        return *self.selector(rules, selector_temp, generator), rules

    @torch.no_grad()
    def soft_proba(self, x: torch.Tensor, selector_temp: float) -> torch.Tensor:
        """Relaxed prediction without noise: softmax(H · softmax(r⊙s/τ))."""
        x = self.checked_input(x)
        check_scalar(selector_temp, "selector_temp", low=0, inclusive="neither")
        return torch.softmax(self(x, selector_temp, None)[0], dim=-1)
