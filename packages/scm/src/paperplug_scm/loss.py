"""The dual-supervision loss (paper §4.2): α·CE_token + (1−α)·CE_response + γ·L_logic.

L_logic encodes "a harmful response has at least one harmful token": with c_hol = P(harmful)
from the response head and c_tok,i from the token head, it is −log(1 − c_hol + c_hol·max_i c_tok,i)
over the labelled tokens, averaged over the batch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperplug.checks import check_choice, check_scalar, check_tensor
from paperplug_scm.fineharm import IGNORE_INDEX

REDUCTIONS = ("max", "min", "avg")


def logic_consistency_loss(
    response_logits: torch.Tensor,  # (batch, 2)
    token_logits: torch.Tensor,  # (batch, seq, 2)
    token_mask: torch.Tensor,  # (batch, seq), 1 on labelled tokens
    *,
    reduce: str = "max",
) -> torch.Tensor:
    """Mean over the batch of −log clamp(1 − c_hol + c_hol·reduce_i(c_tok,i·mask_i), 1e-8)."""
    check_choice(reduce, "reduce", REDUCTIONS)
    # checked, not replaced: the checked copies are detached and the loss needs the gradients
    batch = len(check_tensor(response_logits, "response_logits", shape=(None, 2)))
    seq = check_tensor(token_logits, "token_logits", shape=(batch, None, 2)).shape[1]
    check_tensor(token_mask, "token_mask", dtype="bool", shape=(batch, seq))
    return _logic_loss(response_logits, token_logits, token_mask, reduce)


def _logic_loss(
    response_logits: torch.Tensor, token_logits: torch.Tensor, token_mask: torch.Tensor, reduce: str
) -> torch.Tensor:
    """`logic_consistency_loss` on the model's own outputs (unchecked: every training step)."""
    c_hol = response_logits.softmax(-1)[..., 1]  # (batch,)
    c_tok = token_logits.softmax(-1)[..., 1] * token_mask.to(token_logits.dtype)  # (batch, seq)
    if reduce == "max":
        pooled = c_tok.max(-1).values
    elif reduce == "min":
        pooled = c_tok.min(-1).values
    else:
        pooled = c_tok.mean(-1)
    implication = (1 - c_hol + c_hol * pooled).clamp(min=1e-8)
    return -implication.log().mean()


class DualSupervisionLoss(torch.nn.Module):
    """SCM's training loss; defaults α=0.6, γ=1, max-pooling as in the paper."""

    def __init__(self, alpha: float = 0.6, gamma: float = 1.0, reduce: str = "max") -> None:
        super().__init__()
        self.alpha = check_scalar(alpha, "alpha", low=0.0, high=1.0)
        self.gamma = check_scalar(gamma, "gamma", low=0.0)
        self.reduce = check_choice(reduce, "reduce", REDUCTIONS)

    def forward(
        self,
        token_logits: torch.Tensor,  # (batch, seq, 2)
        response_logits: torch.Tensor,  # (batch, 2)
        token_labels: torch.Tensor,  # (batch, seq), IGNORE_INDEX where unlabelled
        response_labels: torch.Tensor,  # (batch,)
    ) -> dict[str, torch.Tensor]:
        """The total loss and its three parts (token CE, response CE, logic)."""
        labelled = token_labels != IGNORE_INDEX
        token_ce = (
            F.cross_entropy(token_logits.reshape(-1, 2), token_labels.reshape(-1))
            if labelled.any()
            else token_logits.sum() * 0
        )
        response_ce = F.cross_entropy(response_logits, response_labels)
        logic = _logic_loss(response_logits, token_logits, labelled, self.reduce)
        total = self.alpha * token_ce + (1 - self.alpha) * response_ce + self.gamma * logic
        return {"loss": total, "token": token_ce, "response": response_ce, "logic": logic}
