"""Issue 36, NeuRules at equal size: what kept NeuRules below a CART of the same size, each
against a closed form or a planted case (the benchmark holds the full comparison)."""

import numpy as np
import pytest
import torch
from paperplug_neurules import (
    Condition,
    NeuRulesClassifier,
    Rule,
    RuleList,
    RuleSelector,
    initial_cut_points,
    prune_conditions,
    weighted_quantile,
)
from paperplug_neurules.ordering import DEFAULT_SCORE


def test_weighted_quantile_is_numpy_inverted_cdf_on_repeated_rows():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 9, size=(40, 3)).astype(np.float32)  # ties, as digits' pixels
    w = rng.integers(1, 4, size=40)
    q = rng.uniform(size=(3, 7))
    got = weighted_quantile(torch.tensor(x), torch.tensor(w, dtype=torch.float32), torch.tensor(q))
    for j in range(3):
        expected = np.quantile(np.repeat(x[:, j], w), q[j], method="inverted_cdf")
        np.testing.assert_array_equal(got[:, j].numpy(), expected)


def test_initial_cut_points_official_range_or_one_box_per_rule():
    """spread 0 is the official start: every rule at each feature's (min, max), so the rules
    dealt to one class are identical and get identical gradients (they stayed near-duplicates:
    on a planted five-rule list the learned list repeated `x4 > -50.4`, `x4 > -51.7`). With a
    spread every rule starts from its own box between the spread's quantiles."""
    x = torch.randn(500, 4, generator=torch.Generator().manual_seed(0))
    ones = torch.ones(500)
    lo, hi = initial_cut_points(x, ones, 6, 0.0, torch.Generator().manual_seed(1))
    torch.testing.assert_close(lo, x.min(0).values.expand(6, -1))
    torch.testing.assert_close(hi, x.max(0).values.expand(6, -1))
    lo, hi = initial_cut_points(x, ones, 6, 0.1, torch.Generator().manual_seed(1))
    assert lo.shape == hi.shape == (6, 4) and len(set(map(tuple, lo.tolist()))) == 6
    q = lambda p: torch.quantile(x, p, dim=0)  # noqa: E731
    assert (lo >= x.min(0).values).all() and (lo <= q(0.1)).all()
    assert (hi <= x.max(0).values).all() and (hi >= q(0.9)).all()


def test_default_rule_by_hand():
    """The relaxed model's default rule: always true at score 0.5, so it answers the rows no
    rule holds on and yields to any rule that holds."""
    selector = RuleSelector(3, 2, torch.Generator().manual_seed(0), head_init=4.0)
    with torch.no_grad():
        selector.order.copy_(torch.tensor([0.0, 1.0, 2.0]))  # priorities 1, 2, 3
        selector.default_head.copy_(torch.tensor([0.0, 6.0]))
    t = 0.2
    rules = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    logits, selection = selector(rules, t)
    none = torch.softmax(torch.tensor([0.0, 0.0, 0.0, DEFAULT_SCORE]) / t, 0)
    first = torch.softmax(torch.tensor([1.0, 0.0, 0.0, DEFAULT_SCORE]) / t, 0)
    torch.testing.assert_close(selection, torch.stack([none, first]))
    heads = torch.cat([selector.heads.detach(), torch.tensor([[0.0], [6.0]])], dim=1)
    torch.testing.assert_close(logits, torch.stack([heads @ none, heads @ first]))
    assert selection[0].argmax() == 3 and selection[1].argmax() == 0
    without = RuleSelector(3, 2, torch.Generator().manual_seed(0), default_rule=False)
    assert without(rules, t)[1].shape == (2, 3) and without.default_head is None


def test_one_step_at_twice_the_rate_is_the_official_double_step():
    """The official loop calls Adam's step twice on each gradient; under a constant gradient
    every Adam step moves each parameter by lr·sign(g), so lr 0.02 with one step retraces the
    official lr 0.01 with two, step for step."""
    g = torch.tensor([0.3, -2.0, 1e-3])

    def run(lr: float, steps_per_batch: int) -> list[torch.Tensor]:
        p = torch.zeros(3, requires_grad=True)
        opt = torch.optim.Adam([p], lr=lr)
        path = []
        for _ in range(5):
            p.grad = g.clone()
            for _ in range(steps_per_batch):
                opt.step()
            path.append(p.detach().clone())
        return path

    for ours, official in zip(run(0.02, 1), run(0.01, 2), strict=True):
        torch.testing.assert_close(ours, official, rtol=1e-4, atol=1e-7)
    assert NeuRulesClassifier().lr == 0.02


def _octants(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Eight classes, one per octant of the unit cube: 1/8 of the rows each."""
    X = np.random.default_rng(seed).uniform(size=(n, 3))
    return X, (X > 0.5) @ np.array([1, 2, 4])


@pytest.mark.parametrize("seed", [0, 1])
def test_one_rule_per_class_learns_eight_octants(seed):
    """As many rules as classes (digits at 10 rules): each rule must hold on one class only.
    With the earlier heads (0.5, learning from the first step) the logits were too flat for the
    cross-entropy to steer the rules, and the list scored 0.59-0.71 here (4 seeds)."""
    X, y = _octants(600, seed)
    X_test, y_test = _octants(3000, seed + 100)
    fit = dict(n_rules=8, n_epochs=200, batch_size=300, random_state=seed)
    clf = NeuRulesClassifier(**fit).fit(X, y)
    assert clf.score(X_test, y_test) >= 0.93
    before = NeuRulesClassifier(head_init=0.5, freeze_heads=0.0, **fit).fit(X, y)
    assert before.score(X_test, y_test) < 0.8


def test_pruning_drops_only_conditions_that_decide_no_training_label():
    """A start inside the data leaves cut points on features a rule does not need; a condition
    whose removal changes no training row's label goes, a needed one stays, and the list's
    answers on the training rows are unchanged."""
    X = np.random.default_rng(0).uniform(size=(400, 3))
    classes = (0, 1)
    c = lambda f, lo, hi: Condition(f, f"x{f}", lo, hi)  # noqa: E731
    first = Rule((c(0, 0.5, np.inf), c(2, 0.01, np.inf)), 1, (0.1, 0.9), 2.0, 0.0)
    second = Rule((c(0, 0.4, np.inf),), 1, (0.2, 0.8), 1.0, 0.0)  # answers 1 where x2 hid
    rules = RuleList((first, second), 0, (0.6, 0.4), classes)
    pruned = prune_conditions(rules, X)
    assert [str(r) for r in pruned.rules] == ["x0 > 0.5", "x0 > 0.4"]
    np.testing.assert_array_equal(pruned.predict(X), rules.predict(X))
    needed = RuleList((Rule((c(0, 0.5, np.inf), c(1, 0.3, np.inf)), 1, (0.1, 0.9), 2.0, 0.0),),
                      0, (0.6, 0.4), classes)  # fmt: skip
    assert prune_conditions(needed, X).rules == needed.rules
