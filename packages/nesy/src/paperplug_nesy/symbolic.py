"""The symbolic functions σ that label a bag of M hidden classes with one output (paper §2):
MAX-M, SUM-M, the smallest common parent in a class hierarchy, or a user's callable. Each
knows its abductive proofs — the assignments (y_1..y_M) that produce an output."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from paperplug.checks import check_array, check_callable, check_scalar, check_sequence, check_type


@dataclass
class SymbolicFunction:
    """σ over M inputs of C classes; `outputs` the values it can take, in a fixed order."""

    name: str
    M: int
    C: int
    fn: Callable[[tuple[int, ...]], int]
    outputs: list[int] = field(default_factory=list, init=False)
    _proofs: dict[int, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        check_name(self.name)
        check_scalar(self.M, "M", "int", low=1)
        check_scalar(self.C, "C", "int", low=2)
        check_callable(self.fn, "fn")
        if self.C**self.M > 2_000_000:
            raise ValueError(f"{self.C}^{self.M} assignments are too many to enumerate proofs")
        table: dict[int, list[tuple[int, ...]]] = {}
        for y in itertools.product(range(self.C), repeat=self.M):
            table.setdefault(int(self.fn(y)), []).append(y)
        self.outputs = sorted(table)
        self._proofs = {s: np.array(p, dtype=np.int64) for s, p in table.items()}

    def __call__(self, y: Sequence[int]) -> int:
        return int(self.fn(tuple(int(v) for v in y)))

    def proofs(self, s: int) -> np.ndarray:
        """(n_proofs, M): every assignment of the inputs that σ maps to s."""
        check_scalar(s, "s", "int")
        if s not in self._proofs:
            raise ValueError(f"s: {self.name} never outputs {s!r}; outputs are {self.outputs}")
        return self._proofs[s]

    def table(self) -> np.ndarray:
        """σ on every assignment, shape (C,)*M, from the proofs enumerated once at creation."""
        out = np.empty((self.C,) * self.M, dtype=np.int64)
        for s, proofs in self._proofs.items():
            out[tuple(proofs.T)] = s
        return out

    def index(self, s: object, name: str = "s") -> np.ndarray:
        """Positions of outputs `s` in `outputs` (raises naming `name` and an impossible output)."""
        check_name(name)
        lookup = {v: i for i, v in enumerate(self.outputs)}
        values = np.asarray(s).ravel()
        bad = list(dict.fromkeys(v for v in values.tolist() if v not in lookup))  # distinct
        if bad:
            raise ValueError(
                f"{name} holds {bad[:5]}, which {self.name} cannot output; outputs are {self.outputs}"
            )
        return np.array([lookup[v] for v in values.tolist()], dtype=np.int64)


def check_name(name: object) -> str:
    """`name` if it is a non-empty string (a σ's name)."""
    check_type(name, "name", str)
    if not name:
        raise ValueError("name must be a non-empty string")
    return name


def check_sigma(sigma: object, name: str = "sigma") -> SymbolicFunction:
    """`sigma` if it is a SymbolicFunction, else a TypeError naming `name`."""
    return check_type(
        sigma, name, SymbolicFunction, what="a SymbolicFunction (max_of, sum_of, ...)"
    )


def check_labels(sigma: SymbolicFunction, s: object, name: str = "s") -> np.ndarray:
    """Weak labels: a non-empty 1-D array of integers, each an output σ can take."""
    s = check_array(s, name, dtype="int", ndim=1)
    sigma.index(s, name)
    return s


def check_bags(sigma: SymbolicFunction, value: object, name: str) -> np.ndarray:
    """A (bags, M, C) float array of the instances' scores, finite."""
    return check_array(value, name, ndim=3, shape=(None, sigma.M, sigma.C))


def max_of(M: int, C: int = 10) -> SymbolicFunction:
    """MAX-M: the weak label is the largest of M hidden labels in 0..C−1."""
    return SymbolicFunction(f"MAX-{M}", M, C, max)


def sum_of(M: int, C: int = 10) -> SymbolicFunction:
    """SUM-M: the weak label is the sum of M hidden labels in 0..C−1."""
    return SymbolicFunction(f"SUM-{M}", M, C, sum)


def smallest_parent(parents: Sequence[int]) -> SymbolicFunction:
    """σ(y1, y2) = the lowest common ancestor of two classes in a tree (`parents[c]` is c's
    parent, −1 for the root); the classes are the tree's nodes."""
    parents = check_sequence(parents, "parents", int, min_len=2, what="parent indices")
    C = len(parents)
    if any(not -1 <= p < C for p in parents) or parents.count(-1) > 1:
        raise ValueError(
            f"parents must hold parent indices in 0..{C - 1} and one root (-1), got {parents}"
        )

    def ancestors(c: int) -> list[int]:
        chain = [c]
        while parents[chain[-1]] >= 0:
            chain.append(parents[chain[-1]])
            if len(chain) > C:
                raise ValueError("parents holds a cycle")
        return chain

    def lca(y: tuple[int, ...]) -> int:
        first = ancestors(y[0])
        common = set(ancestors(y[1]))
        return next(a for a in first if a in common)

    return SymbolicFunction("smallest-parent", 2, C, lca)


def from_callable(
    fn: Callable[[tuple[int, ...]], int], M: int, C: int, name: str = "σ"
) -> SymbolicFunction:
    """A user's σ: any function of M class indices in 0..C−1 returning an int."""
    return SymbolicFunction(name, M, C, fn)
