"""NeuRulesClassifier: the scikit-learn estimator around the five stages."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from paperplug_neurules.extraction import Rule, RuleList, extract_rule_list
from paperplug_neurules.network import NeuralRuleList
from paperplug_neurules.training import TrainingConfig, train_rule_list

_POSITIVE = ("n_rules", "n_epochs", "lr", "batch_size", "predicate_temp", "selector_temp")


class NeuRulesClassifier(ClassifierMixin, BaseEstimator):
    """Ordered rule list learned end to end (Xu, Walter, Vreeken, NeurIPS 2025).

    Defaults follow the official `run_method.py`. `predict` and `predict_proba` use the hard
    rule list (`rule_list_`, printable with `print(clf.rule_list_)`); `predict_soft` uses the
    relaxed network. Inputs are standardised internally; rules are reported in your units.
    """

    def __init__(
        self,
        n_rules: int = 10,
        n_epochs: int = 500,
        lr: float = 0.01,
        batch_size: int = 2048,
        min_support: float = 0.2,
        lambda_support: float = 0.4,
        predicate_temp: float = 0.2,
        selector_temp: float = 1.0,
        anneal_factor: float = 5.0,
        eps: float = 1e-3,
        random_state: int | np.random.RandomState | None = None,
        verbose: bool = False,
    ):
        self.n_rules = n_rules
        self.n_epochs = n_epochs
        self.lr = lr
        self.batch_size = batch_size
        self.min_support = min_support
        self.lambda_support = lambda_support
        self.predicate_temp = predicate_temp
        self.selector_temp = selector_temp
        self.anneal_factor = anneal_factor
        self.eps = eps
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self) -> None:
        for name in _POSITIVE:
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        for name in ("n_rules", "n_epochs", "batch_size"):
            if not isinstance(getattr(self, name), numbers.Integral):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if not 0 <= self.min_support <= 1:
            raise ValueError(f"min_support must lie in [0, 1], got {self.min_support!r}")
        if self.lambda_support < 0 or self.eps < 0 or self.anneal_factor < 1:
            raise ValueError("lambda_support and eps must be >= 0 and anneal_factor >= 1")

    def fit(self, X, y, feature_names: Sequence[str] | None = None) -> NeuRulesClassifier:
        """Learn the relaxed rule list, then extract the hard list `rule_list_`."""
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"NeuRules needs at least two classes in y, got 1 class: {self.classes_[0]!r}"
            )
        names = self._feature_names(feature_names, X.shape[1])
        self.mean_ = X.mean(axis=0)
        self.scale_ = np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        Z = torch.as_tensor((X - self.mean_) / self.scale_, dtype=torch.float32)
        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        generator = torch.Generator().manual_seed(seed)
        self.network_ = NeuralRuleList(
            Z.min(dim=0).values,
            Z.max(dim=0).values,
            self.n_rules,
            len(self.classes_),
            predicate_temp=self.predicate_temp,
            eps=self.eps,
            generator=generator,
        )
        config = TrainingConfig(
            self.n_epochs,
            self.lr,
            self.batch_size,
            self.min_support,
            self.lambda_support,
            self.predicate_temp,
            self.selector_temp,
            self.anneal_factor,
        )
        target = torch.as_tensor(y_index, dtype=torch.long)
        self.history_ = train_rule_list(
            self.network_, Z, target, config, generator, self._progress()
        )
        self.rule_list_ = extract_rule_list(
            self.network_,
            mean=self.mean_,
            scale=self.scale_,
            feature_names=names,
            classes=self.classes_,
            X_train=X,
            y_train=y_index,
        )
        self.rules_: list[Rule] = list(self.rule_list_.rules)
        return self

    def _feature_names(self, feature_names: Sequence[str] | None, n_features: int) -> list[str]:
        if feature_names is not None:
            names = [str(n) for n in feature_names]
            if len(names) != n_features:
                raise ValueError(f"feature_names has {len(names)} names for {n_features} features")
            return names
        if hasattr(self, "feature_names_in_"):
            return [str(n) for n in self.feature_names_in_]
        return [f"x{i}" for i in range(n_features)]

    def _progress(self):
        if not self.verbose:
            return None

        def report(epoch: int, record: dict[str, float]) -> None:
            if epoch % max(1, self.n_epochs // 10) == 0 or epoch == self.n_epochs - 1:
                print(f"epoch {epoch + 1}/{self.n_epochs}  loss {record['loss']:.4f}", flush=True)

        return report

    def _validated(self, X) -> np.ndarray:
        check_is_fitted(self, "rule_list_")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the rule that answers each row (the hard list)."""
        X = self._validated(X)
        return self.rule_list_.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[proba.argmax(axis=1)]

    def predict_soft(self, X) -> np.ndarray:
        """Probabilities of the relaxed network at the final selector temperature (no noise)."""
        X = self._validated(X)
        Z = torch.as_tensor((X - self.mean_) / self.scale_, dtype=torch.float32)
        return self.network_.soft_proba(Z, self.selector_temp / self.anneal_factor).numpy()

    @property
    def coverage_(self) -> float:
        """Fraction of training rows answered by a learned rule rather than the default."""
        check_is_fitted(self, "rule_list_")
        return float(sum(r.support for r in self.rule_list_.rules))


__all__ = ["NeuRulesClassifier", "Rule", "RuleList"]
