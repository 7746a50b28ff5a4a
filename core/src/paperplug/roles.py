"""The five roles as Protocols, their result dataclasses, and the ChatModel protocol.

Results carry `to_dict()` returning JSON-ready data: arrays and tensors become nested lists
through their own `tolist()`, so the core never imports numpy or torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol, runtime_checkable

STAGES: tuple[str, ...] = ("train_data", "input", "tool", "decode", "output")
EXPLANATION_KINDS: tuple[str, ...] = ("feature", "interaction", "data", "concept")

Message = Mapping[
    str, Any
]  # {"role": "system" | "user" | "assistant" | "tool", "content": str, ...}


def to_jsonable(value: Any) -> Any:
    """Turn results into JSON-ready data: dataclasses, mappings, sequences, arrays, tensors."""
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, bool, int)) or value is None:
        return value.decode() if isinstance(value, bytes) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu()
    if hasattr(value, "tolist"):  # numpy arrays and scalars, tensors
        return to_jsonable(value.tolist())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    text = repr(value)  # an object with no data form (a model, a function): named, not dumped
    return text if len(text) <= 200 else f"<{type(value).__module__}.{type(value).__qualname__}>"


class _Result:
    def to_dict(self) -> dict[str, Any]:
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}


@dataclass
class History(_Result):
    """What a Trainer records while fitting: one dict of metrics per step or epoch."""

    records: list[dict[str, float]] = field(default_factory=list)

    def log(self, **metrics: float) -> None:
        self.records.append(dict(metrics))

    def __getitem__(self, key: str) -> list[float]:
        return [r[key] for r in self.records if key in r]

    def __len__(self) -> int:
        return len(self.records)


@dataclass
class Explanation(_Result):
    """Attribution `values` (shaped like the inputs for kind="feature") and metadata."""

    values: Any
    kind: Literal["feature", "interaction", "data", "concept"] = "feature"
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in EXPLANATION_KINDS:
            raise ValueError(
                f"Explanation.kind must be one of {EXPLANATION_KINDS}, got {self.kind!r}"
            )


@dataclass
class Verdict(_Result):
    """A defense's answer (llm-guard's scanner triple plus a reason).

    `payload` is the sanitized payload the next defense receives. A train_data defense
    puts the indices it removes, relative to the payload it received, in
    `details["removed"]`.
    """

    payload: Any
    valid: bool
    risk: float = 0.0
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        risk = float(self.risk)
        if not 0.0 <= risk <= 1.0:
            raise ValueError(f"Verdict.risk must lie in [0, 1], got {self.risk!r}")
        self.risk = risk
        self.valid = bool(self.valid)


@dataclass
class AttackResult(_Result):
    """What an attack produced: `success` is one bool, or one per input."""

    adversarial: Any
    success: bool | Sequence[bool]
    queries: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def success_rate(self) -> float:
        if isinstance(self.success, bool):
            return float(self.success)
        flags = [bool(s) for s in self.success]
        return sum(flags) / len(flags) if flags else 0.0


@dataclass
class Solution(_Result):
    """A solver's answer: the solution, its objective, and a certificate a user can check."""

    value: Any
    objective: float | dict[str, float] | None = None
    certificate: Any = None
    meta: dict[str, Any] = field(default_factory=dict)


# -- the role contract, stated once: the Protocols below; `load` and the contract tests check
# an instance against them (`missing_members`). Optional calls are named in the docstrings.


@runtime_checkable
class Trainer(Protocol):
    """`fit(data, ...)` learns and returns self (history in `history_`); predict/sample/score
    as the method needs. Classifiers follow scikit-learn's estimator API."""

    def fit(self, data: Any, *args: Any, **kw: Any) -> Any: ...


@runtime_checkable
class Explainer(Protocol):
    """`explain(model, inputs, target=...)` returns an Explanation."""

    def explain(self, model: Any, inputs: Any, *, target: Any = None, **kw: Any) -> Explanation: ...


@runtime_checkable
class Defense(Protocol):
    """`stage` is one of STAGES; `check(payload, context)` returns a Verdict. Optional:
    `fit(data)` when the defense learns."""

    stage: str

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict: ...


@runtime_checkable
class Attack(Protocol):
    """`stage` is where a guard sits against it (one of STAGES); `run` returns an AttackResult.
    Optional: `assess(target, payload)` re-scores success on what a guard passed on (None for
    a blocked item), as `evaluate` uses it."""

    stage: str

    def run(self, target: Any, inputs: Any, *, budget: int | None = None) -> AttackResult: ...


@runtime_checkable
class Solver(Protocol):
    """`solve(problem, seed=...)` returns a Solution."""

    def solve(self, problem: Any, *, seed: int | None = None, **kw: Any) -> Solution: ...


@runtime_checkable
class ChatModel(Protocol):
    """Messages in, text out.

    Backends may add `stream(messages, **kw) -> Iterator[str]` (token streaming) and
    `complete(messages, **kw)` (text plus tool calls and per-token log-probabilities; see
    paperplug-llm). Methods use the richer calls when present and fall back to `chat`.
    """

    def chat(self, messages: Sequence[Message], **kw: Any) -> str: ...


def stream_chat(model: ChatModel, messages: Sequence[Message], **kw: Any) -> Iterator[str]:
    """Stream from a ChatModel: its own `stream` when it has one, else the whole reply at once."""
    stream = getattr(model, "stream", None)
    if callable(stream):
        yield from stream(messages, **kw)
    else:
        yield model.chat(messages, **kw)


ROLE_PROTOCOLS: dict[str, type] = {
    "trainer": Trainer,
    "explainer": Explainer,
    "defense": Defense,
    "attack": Attack,
    "solver": Solver,
}
ROLES: tuple[str, ...] = tuple(ROLE_PROTOCOLS)


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The attributes and methods a Protocol declares (what an implementation must have)."""
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}
    return tuple(sorted(names))


def missing_members(role: str, instance: Any) -> list[str]:
    """What `instance` lacks of `role`'s Protocol; a defense's or attack's stage is checked too."""
    members = protocol_members(ROLE_PROTOCOLS[role])
    missing = [m for m in members if not hasattr(instance, m)]
    stage = getattr(instance, "stage", None)
    if not missing and "stage" in members and stage not in STAGES:
        missing.append(f"stage in {STAGES} (has {stage!r})")
    return missing
