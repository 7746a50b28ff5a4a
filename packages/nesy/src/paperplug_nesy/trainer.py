"""The Trainer component: a classifier learned from bags labelled only by σ, with the paper's
mitigations of the imbalance σ induces — the batch LP at training time, logit adjustment or
CAROT at test time — on any torch classifier."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from paperplug import History, seeded_torch
from paperplug.checks import (
    check_array,
    check_choice,
    check_consistent_length,
    check_device,
    check_distribution,
    check_is_fitted,
    check_scalar,
    check_type,
)
from paperplug.harness import progress
from paperplug_nesy.calibration import (
    bag_accuracy,
    carot_plan,
    choose_carot,
    choose_la,
    logit_adjustment,
)
from paperplug_nesy.lp import count_band, pseudo_labels
from paperplug_nesy.marginal import estimate_marginal, marginal_error, naive_marginal_update
from paperplug_nesy.semantic import semantic_loss
from paperplug_nesy.symbolic import SymbolicFunction, max_of, sum_of

MARGINAL_WARN_L1 = 0.2  # expected ‖r̂ − r‖₁ above which fit warns (ours)
TRAIN = (None, "lp")
LP_SCOPES = ("dataset", "batch")
TEST = (None, "la", "carot")


def _sigma(sigma: Any, M: int, C: int) -> SymbolicFunction:
    if isinstance(sigma, SymbolicFunction):
        return sigma
    if sigma == "max":
        return max_of(M, C)
    if sigma == "sum":
        return sum_of(M, C)
    raise ValueError(f"sigma must be 'max', 'sum' or a SymbolicFunction, got {sigma!r}")


class NeSyImbalanceTrainer:
    """fit(bags (N, M, ...features), s (N,)) learns per-instance classes from σ(y) alone.

    train_mitigation: None (the exact semantic loss) or "lp" (cross-entropy on the LP's
    pseudo-labels, after `warmup_epochs` of semantic loss — half the epochs by default — as the
    official scripts start LP training from an SL-trained model). lp_scope: "dataset" (ours:
    one LP over all training bags per epoch, class counts pooled over positions within the
    band their sampling and the marginal's estimation error allow, `count_band`) or "batch"
    (the official code: one LP per mini-batch, counts per position within ±0.99 of r̂·B).
    marginal: "estimate" (from
    the weak labels), "naive" (the official code's: from uniform, moved after every LP epoch
    toward the share of the classifier's predictions by γ = `naive_gamma`, over a
    `naive_epochs` pre-estimation stage whose model is then discarded; needs the LP), or an
    array (e.g. the gold frequencies). test_mitigation: None, "la" or
    "carot", their parameters chosen on weakly labelled validation bags (`val_fraction` of the
    bags held out) — never on gold labels. CAROT transports toward `test_prior`: the estimated
    marginal by default (the test data follow the training data, the paper's protocol), or a
    known prior ("uniform" for a balanced test set, or an array). With a known test prior π,
    LA is logits − log r̂ + log π (τ = 1, the Bayes rule under label shift; ours), since the
    validation bags, drawn like the training bags, cannot score a different test prior; where
    fit warns that r̂ is poorly identified, τ is chosen on the validation bags instead."""

    def __init__(
        self,
        sigma: Any = "max",
        M: int = 3,
        n_classes: int = 10,
        train_mitigation: str | None = None,
        test_mitigation: str | None = None,
        lp_scope: str = "dataset",
        marginal: Any = "estimate",
        model: nn.Module | Callable[[], nn.Module] | None = None,
        hidden: int = 128,
        epochs: int = 30,
        warmup_epochs: int | None = None,
        test_prior: Any = None,
        batch_size: int = 32,
        lr: float = 1e-3,
        val_fraction: float = 0.1,
        seed: int = 0,
        device: str = "cpu",
        progress: bool = True,
        naive_epochs: int = 20,
        naive_gamma: tuple[float, float] = (0.05, 0.01),
    ) -> None:
        self.sigma, self.M, self.n_classes = sigma, M, n_classes
        self.train_mitigation, self.test_mitigation, self.marginal = (
            train_mitigation,
            test_mitigation,
            marginal,
        )
        self.model, self.hidden, self.epochs, self.batch_size, self.lr = (
            model,
            hidden,
            epochs,
            batch_size,
            lr,
        )
        self.val_fraction, self.seed, self.device, self.progress = (
            val_fraction,
            seed,
            device,
            progress,
        )
        self.warmup_epochs, self.test_prior, self.lp_scope = warmup_epochs, test_prior, lp_scope
        self.naive_epochs, self.naive_gamma = naive_epochs, naive_gamma

    def _check_params(self) -> None:
        check_choice(self.train_mitigation, "train_mitigation", TRAIN)
        check_choice(self.test_mitigation, "test_mitigation", TEST)
        check_choice(self.lp_scope, "lp_scope", LP_SCOPES)
        check_scalar(self.M, "M", "int", low=1)
        check_scalar(self.n_classes, "n_classes", "int", low=2)
        check_scalar(self.hidden, "hidden", "int", low=1)
        check_scalar(self.epochs, "epochs", "int", low=1)
        check_scalar(self.warmup_epochs, "warmup_epochs", "int", low=0, allow_none=True)
        check_scalar(self.batch_size, "batch_size", "int", low=1)
        check_scalar(self.lr, "lr", low=0, inclusive="neither")
        check_scalar(self.val_fraction, "val_fraction", low=0, high=1, inclusive="left")
        check_scalar(self.seed, "seed", "int", low=0)
        check_device(self.device)
        check_type(self.progress, "progress", bool)
        check_scalar(self.naive_epochs, "naive_epochs", "int", low=0)
        if (
            isinstance(self.naive_gamma, (str, bytes))
            or np.ndim(self.naive_gamma) != 1
            or len(self.naive_gamma) != 2
        ):
            raise TypeError(f"naive_gamma must be a pair (γ₁, γ₂), got {self.naive_gamma!r}")
        for gamma in self.naive_gamma:
            check_scalar(gamma, "naive_gamma", "real", low=0, high=1)

    def _check(self, bags: Any, s: Any) -> tuple[np.ndarray, np.ndarray]:
        X = check_array(bags, "bags").astype(np.float32)
        if X.ndim < 3 or X.shape[1] != self.sigma_.M:
            raise ValueError(
                f"bags must be (N, M={self.sigma_.M}, ...features), got shape {X.shape}"
            )
        if isinstance(s, (str, bytes)) or np.ndim(s) == 0:
            raise TypeError(
                f"s must be an array of weak labels, one per bag, got {type(s).__name__}"
            )
        s = np.asarray(s).ravel()
        check_consistent_length(bags=X, s=s)
        self.sigma_.index(s, "s")
        return X, s

    def fit(self, bags: Any, s: Any) -> NeSyImbalanceTrainer:
        self._check_params()
        self.sigma_ = _sigma(self.sigma, self.M, self.n_classes)
        X, s = self._check(bags, s)
        self.instance_shape_ = X.shape[2:]
        rng = np.random.default_rng(self.seed)
        order = rng.permutation(len(X))
        n_val = round(self.val_fraction * len(X)) if self.test_mitigation else 0
        val, train = order[:n_val], order[n_val:]
        self.marginal_se_ = self.marginal_error_ = None  # a given marginal has no error
        if isinstance(self.marginal, str):
            check_choice(self.marginal, "marginal", ("estimate", "naive"))
        naive = isinstance(self.marginal, str) and self.marginal == "naive"
        if naive:
            if self.train_mitigation != "lp":
                raise ValueError(
                    'marginal="naive" is the LP\'s moving average of the predictions: it needs '
                    f'train_mitigation="lp", got {self.train_mitigation!r}'
                )
            self.marginal_ = np.full(self.sigma_.C, 1.0 / self.sigma_.C)  # moved while training
        elif isinstance(self.marginal, str):
            self.marginal_ = estimate_marginal(self.sigma_, s[train], seed=self.seed)
            self._warn_if_unidentified(len(train))
        else:
            self.marginal_ = check_distribution(
                self.marginal, "marginal", size=self.sigma_.C
            ).copy()
        self._test_prior()  # checked before training
        features = int(np.prod(X.shape[2:]))
        with seeded_torch(self.seed):
            self.model_ = self._build(features).to(self.device)
            self._train(X[train], s[train], rng, naive)
        identified = self.marginal_error_ is None or self.marginal_error_ <= MARGINAL_WARN_L1
        bayes = self.test_mitigation == "la" and self.test_prior is not None and identified
        if bayes:
            # the validation bags follow the training prior, so their bag accuracy scores that
            # prior, not the test's: a known test prior gets the Bayes rule, τ = 1 (unless r̂ is
            # poorly identified: a class estimated near 0 would take every prediction)
            self.la_tau_ = 1.0
        if self.test_mitigation and len(val):
            logits = self._logits(X[val].reshape(-1, *X.shape[2:])).reshape(
                len(val), self.sigma_.M, -1
            )
            if bayes:
                pred = logit_adjustment(logits, self.marginal_, 1.0, self._test_prior())
                self.val_bag_accuracy_ = bag_accuracy(self.sigma_, pred.argmax(-1), s[val])
            elif self.test_mitigation == "la":
                self.la_tau_, self.val_bag_accuracy_ = choose_la(
                    self.sigma_, logits, s[val], self.marginal_
                )
            else:
                log_probs = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
                self.carot_eta_, self.carot_tau_, self.val_bag_accuracy_ = choose_carot(
                    self.sigma_, log_probs, s[val], self.marginal_
                )
        return self

    def _warn_if_unidentified(self, n: int) -> None:
        """Warn when n weak labels pin the marginal poorly: Cramér–Rao expected L1 error above
        MARGINAL_WARN_L1 at the estimate (kept in `marginal_error_`)."""
        r = (self.marginal_ + 1e-6) / (self.marginal_ + 1e-6).sum()  # off the simplex's edge
        error = marginal_error(self.sigma_, r, n)
        self.marginal_error_, self.marginal_se_ = error["expected_l1"], error["se"]
        if self.marginal_error_ > MARGINAL_WARN_L1:
            warnings.warn(
                f"the marginal is poorly identified by {n} bags under {self.sigma_.name}: "
                f"expected L1 error {self.marginal_error_:.3g} (Cramér–Rao, above "
                f"{MARGINAL_WARN_L1}); the LP and the test-time mitigations lean on it: pass "
                "marginal=<known class frequencies>, or more bags",
                UserWarning,
                stacklevel=3,
            )

    def _build(self, features: int) -> nn.Module:
        """A copy of the caller's module, the caller's factory's product, or the paper's MLP."""
        if isinstance(self.model, nn.Module):
            return copy.deepcopy(self.model)  # the caller's module is never trained in place
        if callable(self.model):
            return self.model()
        if self.model is not None:
            raise TypeError(f"model must be a torch module or a factory, got {type(self.model)}")
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(features, self.hidden),
            nn.ReLU(),
            nn.Linear(self.hidden, self.sigma_.C),
        )

    def _train(self, X: np.ndarray, s: np.ndarray, rng: np.random.Generator, naive: bool) -> None:
        """Semantic loss for the warm-up, then LP epochs. With `naive` (marginal="naive", the
        official code): from the warm-up's model, `naive_epochs` LP epochs moving r̂ from
        uniform by γ₁ after each, then the warm-up's model again, a fresh optimiser and the
        remaining epochs moving r̂ by γ₂."""
        self.history_ = History()
        warmup = self.epochs // 2 if self.warmup_epochs is None else self.warmup_epochs
        sl = ("sl", min(warmup, self.epochs), None)
        if self.train_mitigation != "lp":
            stages = [("sl", self.epochs, None)]
        elif naive:
            stages = [sl, ("naive", self.naive_epochs, self.naive_gamma[0]),
                      ("lp", self.epochs - warmup, self.naive_gamma[1])]  # fmt: skip
        else:
            stages = [sl, ("lp", self.epochs - warmup, None)]
        plan = [(stage, gamma) for stage, n, gamma in stages for _ in range(n)]
        optimizer = torch.optim.Adam(self.model_.parameters(), lr=self.lr)
        checkpoint, previous = None, "sl"
        epochs = enumerate(progress(plan, "train NeSy") if self.progress else plan, 1)
        for epoch, (stage, gamma) in epochs:
            if stage == "naive" and previous != "naive":  # the pre-estimation starts from the
                checkpoint = copy.deepcopy(self.model_.state_dict())  # SL model, and so does
            if stage == "lp" and previous == "naive":  # the final LP stage, with a new Adam
                self.model_.load_state_dict(checkpoint)
                optimizer = torch.optim.Adam(self.model_.parameters(), lr=self.lr)
            previous = stage
            record = self._epoch(X, s, rng, optimizer, lp=stage != "sl")
            if gamma is not None:
                logits = self._logits(X.reshape(-1, *X.shape[2:]))
                self.marginal_ = naive_marginal_update(self.marginal_, logits, gamma)
                record["marginal"] = self.marginal_.tolist()
            self.history_.log(epoch=epoch, stage=stage, **record)

    def _epoch(
        self, X: np.ndarray, s: np.ndarray, rng: np.random.Generator, optimizer: Any, lp: bool
    ) -> dict:
        """One pass over the bags: the semantic loss, or cross-entropy on the LP's labels."""
        Xt, st = torch.from_numpy(X), torch.as_tensor(s)
        B, M, C = len(X), self.sigma_.M, self.sigma_.C
        total, widened, q_all = 0.0, [], None
        if lp and self.lp_scope == "dataset":
            q_all = self._dataset_pseudo_labels(X, s, widened)
        for idx in np.array_split(rng.permutation(B), max(1, B // self.batch_size)):
            x = Xt[idx].to(self.device)
            logits = self.model_(x.reshape(len(idx) * M, *x.shape[2:])).reshape(len(idx), M, C)
            if lp:
                if q_all is None:  # the official code: an LP per mini-batch
                    log_probs = torch.log_softmax(logits, -1).detach().cpu().numpy()
                    solution = pseudo_labels(
                        self.sigma_, log_probs, s[idx], self.marginal_, per_position=True
                    )
                    widened.append(float(solution.epsilon.max()))
                    q = solution.q
                else:
                    q = q_all[idx]
                target = torch.as_tensor(q, dtype=logits.dtype, device=self.device)
                loss = -(target * torch.log_softmax(logits, -1)).sum(-1).mean()
            else:
                loss = semantic_loss(self.sigma_, logits, st[idx].to(self.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        record = {"loss": total / B}
        if widened:
            record["lp_epsilon"] = float(np.mean(widened))
        return record

    def _dataset_pseudo_labels(self, X: np.ndarray, s: np.ndarray, widened: list) -> np.ndarray:
        """One LP over all training bags with the current classifier, counts pooled over the
        positions within `count_band` of r̂·N·M (the marginal's own error included)."""
        M, C = self.sigma_.M, self.sigma_.C
        logits = self._logits(X.reshape(-1, *X.shape[2:])).reshape(len(X), M, C)
        log_probs = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
        band = count_band(self.marginal_, len(X) * M, self.marginal_se_)
        solution = pseudo_labels(self.sigma_, log_probs, s, self.marginal_, band=band)
        widened.append(float(solution.epsilon.max()))
        return solution.q

    @torch.no_grad()
    def _logits(self, X: np.ndarray) -> np.ndarray:
        self.model_.eval()
        out = self.model_(torch.as_tensor(X, dtype=torch.float32, device=self.device)).cpu().numpy()
        self.model_.train()
        return out

    def _test_prior(self) -> np.ndarray:
        if self.test_prior is None:
            return self.marginal_
        if isinstance(self.test_prior, str):
            check_choice(self.test_prior, "test_prior", ("uniform",))
            return np.full(self.sigma_.C, 1.0 / self.sigma_.C)
        return check_distribution(self.test_prior, "test_prior", size=self.sigma_.C).copy()

    def _instances(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "model_")
        X = check_array(X, "X").astype(np.float32)
        if X.shape[1:] != self.instance_shape_:
            raise ValueError(
                f"X must be (n, {', '.join(map(str, self.instance_shape_))}) instances like the "
                f"bags' at fit, got shape {X.shape}"
            )
        return X

    def predict(self, X: Any) -> np.ndarray:
        """The class of each instance (n, ...features), without test-time mitigation."""
        return self._logits(self._instances(X)).argmax(1)

    def predict_calibrated(self, X: Any) -> np.ndarray:
        """The classes with the test-time mitigation chosen at fit: LA per instance; CAROT
        over X taken as one batch (a single instance falls back to LA with τ = 1)."""
        logits = self._logits(self._instances(X))
        target = None if self.test_prior is None else self._test_prior()
        if self.test_mitigation == "la":
            return logit_adjustment(logits, self.marginal_, self.la_tau_, target).argmax(1)
        if self.test_mitigation == "carot":
            if len(logits) == 1:
                return logit_adjustment(logits, self.marginal_, 1.0, target).argmax(1)
            log_probs = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
            return carot_plan(
                log_probs, self._test_prior(), eta=self.carot_eta_, tau=self.carot_tau_
            ).argmax(1)
        return logits.argmax(1)
