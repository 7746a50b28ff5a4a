"""The Explainer component: one entry point for DSC, PA and UCD on any activations source
(paper §3): activations given as an array, a torch module with a layer name (forward hook),
or a Hugging Face model (name, path or object) with a hidden-state layer index."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug import Explanation
from paperplug.checks import check_array, check_choice, check_consistent_length, check_sequence

METHODS = ("dsc", "pa", "ucd")


class ChunkExplainer:
    """`explain(model, inputs, target=...)` -> Explanation(kind="concept").

    * method="dsc": values = the discrete state id of each token; meta holds the chunk
      dictionary (state tuples and counts) and, with `target` = the input symbols, the
      state-to-symbol lookup table.
    * method="pa": `target` = the concept's token positions; values = 1 where the PA
      template detects the concept; meta holds τ, the subpopulation and the threshold.
    * method="ucd": values = each token's chunk (prototype index); meta holds the objective
      and the number of dead prototypes re-initialised.

    `model=None` means `inputs` are activations (tokens × neurons). Otherwise `layer` is a
    module name (str) for a torch module, or a hidden-state index (int) for a Hugging Face
    model given by name, path or object (inputs: a text or token ids)."""

    def __init__(self, method: str = "pa", layer: str | int | None = None, **cfg: Any) -> None:
        check_choice(method, "method", METHODS)
        if layer is not None and (isinstance(layer, bool) or not isinstance(layer, (str, int))):
            raise TypeError(
                f"layer must be a module name (str) or a hidden-state index (int), got {layer!r}"
            )
        self.method, self.layer, self.cfg = method, layer, cfg

    def activations(self, model: Any, inputs: Any) -> np.ndarray:
        """The (tokens, neurons) activations the method reads."""
        if model is None:
            return check_array(inputs, "inputs", ndim=2, copy=True)
        if isinstance(self.layer, str):
            from paperplug_chunking.capture import capture_activations

            H = capture_activations(model, inputs, self.layer)[self.layer]
            return check_array(H, f"layer {self.layer!r}'s activations")
        if isinstance(self.layer, int) and not isinstance(self.layer, bool):
            from paperplug_chunking.capture import hf_hidden_states

            states, _ = hf_hidden_states(model, inputs)
            if not -len(states) <= self.layer < len(states):
                raise ValueError(
                    f"layer {self.layer} outside the model's {len(states)} hidden states"
                )
            return check_array(states[self.layer], f"layer {self.layer}'s hidden states")
        raise TypeError(
            "with a model, layer must be a module name (str) or a hidden-state index (int)"
        )

    def explain(self, model: Any, inputs: Any, *, target: Any = None, **kw: Any) -> Explanation:
        H = self.activations(model, inputs)
        cfg = {**self.cfg, **kw}
        if self.method == "dsc":
            from paperplug_chunking.dsc import DiscreteSequenceChunker

            if target is not None:  # the input symbols, one per token
                target = check_sequence(target, "target", what="input symbols")
                check_consistent_length(inputs=H, target=target)
            dsc = DiscreteSequenceChunker(**cfg).fit(H, target)
            chunks = [{"states": list(c), "count": n} for c, n in dsc.chunking_.dictionary.items()]
            meta = {"method": "dsc", "n_states": len(dsc.state_bins_), "chunks": chunks}
            if dsc.lookup_ is not None:
                meta["lookup"] = {str(s): y for s, y in sorted(dsc.lookup_.items())}
            return Explanation(values=dsc.states_, kind="concept", meta=meta)
        if self.method == "pa":
            from paperplug_chunking.pa import PopulationAveraging, token_positions

            if target is None:
                raise ValueError("method='pa' needs target= the concept's token positions")
            pa = PopulationAveraging(**cfg).fit(H, token_positions(target, len(H), "target"))
            t = pa.template_
            meta = {"method": "pa", "tau": t.tau, "threshold": t.threshold,
                    "neurons": np.flatnonzero(t.mask), "values": t.values,
                    "train_positions": pa.train_positions_, "sweep_auc": pa.sweep_auc_}  # fmt: skip
            return Explanation(values=pa.predict(H).astype(np.int64), kind="concept", meta=meta)
        if target is not None:
            raise ValueError("target: method='ucd' is unsupervised and reads no target")
        from paperplug_chunking.ucd import UnsupervisedChunkDiscovery

        ucd = UnsupervisedChunkDiscovery(**cfg).fit(H)
        meta = {"method": "ucd", "objective": ucd.score(H),
                "n_reinitialised": ucd.n_reinitialised_, "prototypes": ucd.prototypes_}  # fmt: skip
        return Explanation(values=ucd.predict(H), kind="concept", meta=meta)
