"""Masking adapters (§3, "removing players"): image patches are zeroed after the processor's
normalisation (the dataset's mean colour) or replaced by a baseline image; text tokens are
removed through the attention mask, the special tokens at the ends always kept; the
alternative replaces them by a [MASK]/pad id. Each adapter returns a DualEncoderGame."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug.extras import requires_extra
from paperplug_fixlip.game import DualEncoderGame


def _features(out: Any) -> Any:
    """transformers ≥ 5 returns a model output from get_*_features; earlier a tensor."""
    return out if hasattr(out, "detach") else out.pooler_output


def _load(model: Any, auto: str) -> Any:
    if isinstance(model, str):
        with requires_extra("paperplug-fixlip", "hf", "explaining a torch / Hugging Face encoder"):
            import transformers

        return getattr(transformers, auto).from_pretrained(model).eval()
    return model


def _text_players(attention_mask: Any, keep: tuple[str, ...]) -> np.ndarray:
    """Positions of the text players: the attended tokens minus the kept end tokens."""
    positions = np.flatnonzero(np.asarray(attention_mask).reshape(-1))
    if "first" in keep:
        positions = positions[1:]
    if "last" in keep:
        positions = positions[:-1]
    return positions


def clip_game(
    model: Any,
    pixel_values: Any,
    input_ids: Any,
    attention_mask: Any = None,
    *,
    image_masking: str = "zero",
    baseline_image: Any = None,
    text_masking: str = "attention",
    mask_token_id: int | None = None,
    keep: tuple[str, ...] | None = None,
    tokens: list[str] | None = None,
    batch_size: int = 64,
    device: Any = None,
) -> DualEncoderGame:
    """The game of a Hugging Face CLIPModel / SiglipModel (or a name or path of one) on one
    image (pixel_values (1, C, H, W), already processed) and one text (input_ids (1, L)).

    Players: the (H/patch)·(W/patch) patches, row-major, then the text tokens between the kept
    ends (`keep`: ("first", "last") for CLIP's BOS/EOS, ("last",) for SigLIP). Values are
    logit_scale · cosine, i.e. logits_per_image (SigLIP's bias cancels in ν(T) − ν(∅))."""
    with requires_extra("paperplug-fixlip", "hf", "explaining a torch / Hugging Face encoder"):
        import torch

    model = _load(model, "AutoModel")
    if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
        raise TypeError("model must be a dual encoder with get_image_features/get_text_features")
    if image_masking not in ("zero", "baseline") or text_masking not in ("attention", "mask_token"):
        raise ValueError(
            "image_masking in {'zero', 'baseline'}, text_masking in {'attention', 'mask_token'}"
        )
    device = torch.device(device) if device is not None else next(model.parameters()).device
    pixel_values = torch.as_tensor(pixel_values, dtype=torch.float32).to(device)
    input_ids = torch.as_tensor(input_ids).to(device)
    if pixel_values.ndim != 4 or pixel_values.shape[0] != 1:
        raise ValueError(f"pixel_values must be (1, C, H, W), got {tuple(pixel_values.shape)}")
    if input_ids.ndim != 2 or input_ids.shape[0] != 1:
        raise ValueError(f"input_ids must be (1, L), got {tuple(input_ids.shape)}")
    attention_mask = (
        torch.ones_like(input_ids)
        if attention_mask is None
        else torch.as_tensor(attention_mask).to(device)
    )
    patch = int(model.config.vision_config.patch_size)
    _, _, height, width = pixel_values.shape
    if height % patch or width % patch:
        raise ValueError(f"image {height}x{width} is not a whole number of {patch}-pixel patches")
    rows, cols = height // patch, width // patch
    if image_masking == "baseline":
        if baseline_image is None:
            raise ValueError("image_masking='baseline' needs baseline_image")
        baseline = (
            torch.as_tensor(baseline_image, dtype=torch.float32).to(device).expand_as(pixel_values)
        )
    else:
        baseline = torch.zeros_like(pixel_values)
    if keep is None:
        keep = ("last",) if "siglip" in str(model.config.model_type) else ("first", "last")
    players = _text_players(attention_mask.cpu(), keep)
    if len(players) == 0:
        raise ValueError("the text has no tokens to explain besides the kept end tokens")
    if text_masking == "mask_token" and mask_token_id is None:
        raise ValueError("text_masking='mask_token' needs mask_token_id")
    players_t = torch.as_tensor(players, device=device)

    def encode_image(mask: np.ndarray) -> Any:
        m = torch.as_tensor(mask, device=device).float().reshape(-1, 1, rows, cols)
        m = m.repeat_interleave(patch, dim=2).repeat_interleave(patch, dim=3)  # (B, 1, H, W)
        with torch.no_grad():
            images = pixel_values * m + baseline * (1 - m)
            return _features(model.get_image_features(pixel_values=images))

    def encode_text(mask: np.ndarray) -> Any:
        m = torch.as_tensor(mask, device=device)
        ids = input_ids.repeat(len(m), 1)
        att = attention_mask.repeat(len(m), 1).clone()
        if text_masking == "attention":
            att[:, players_t] = m.to(att.dtype)
        else:
            ids[:, players_t] = torch.where(
                m, ids[:, players_t], torch.full_like(ids[:, players_t], mask_token_id)
            )
        with torch.no_grad():
            return _features(model.get_text_features(input_ids=ids, attention_mask=att))

    scale = float(model.logit_scale.detach().exp()) if hasattr(model, "logit_scale") else 1.0
    names_b = tokens or [f"t{int(j)}" for j in players]
    return DualEncoderGame(
        encode_image,
        encode_text,
        rows * cols,
        len(players),
        scale=scale,
        batch_size=batch_size,
        names_a=[f"p{r},{c}" for r in range(rows) for c in range(cols)],
        names_b=names_b,
    )


def clip_game_from_processor(
    model: Any, processor: Any, image: Any, text: str, **kw: Any
) -> DualEncoderGame:
    """`clip_game` from a raw image (PIL or array) and a string, through the model's processor
    (a name or path of either is loaded)."""
    processor = _load(processor, "AutoProcessor")
    inputs = processor(images=image, text=text, return_tensors="pt", padding=True)
    model = _load(model, "AutoModel")
    keep = kw.get("keep") or (
        ("last",) if "siglip" in str(model.config.model_type) else ("first", "last")
    )
    ids = inputs["input_ids"]
    att = inputs.get("attention_mask")
    players = _text_players(att if att is not None else np.ones(ids.shape), keep)
    tokens = processor.tokenizer.convert_ids_to_tokens(ids[0, players].tolist())
    kw.setdefault("tokens", tokens)
    return clip_game(model, inputs["pixel_values"], ids, att, **kw)


def text_pair_game(
    model: Any,
    tokenizer: Any,
    text_a: str,
    text_b: str,
    *,
    masking: str = "attention",
    pooling: str = "mean",
    batch_size: int = 256,
    device: Any = None,
) -> DualEncoderGame:
    """A text–text dual encoder (a sentence embedder as a Hugging Face AutoModel, or its name
    or path): players are each sentence's tokens between [CLS] and [SEP]; the value is the
    cosine of the pooled embeddings (mean over attended tokens, or the [CLS] vector)."""
    with requires_extra("paperplug-fixlip", "hf", "explaining a torch / Hugging Face encoder"):
        import torch

    if masking not in ("attention", "mask_token") or pooling not in ("mean", "cls"):
        raise ValueError("masking in {'attention', 'mask_token'}, pooling in {'mean', 'cls'}")
    if (
        not isinstance(text_a, str)
        or not isinstance(text_b, str)
        or not text_a.strip()
        or not text_b.strip()
    ):
        raise ValueError("text_a and text_b must be non-empty strings")
    tokenizer = _load(tokenizer, "AutoTokenizer")
    model = _load(model, "AutoModel")
    device = torch.device(device) if device is not None else next(model.parameters()).device

    def side(text: str):
        enc = tokenizer(text, return_tensors="pt")
        ids, att = enc["input_ids"].to(device), enc["attention_mask"].to(device)
        players = torch.as_tensor(_text_players(att.cpu(), ("first", "last")), device=device)
        names = tokenizer.convert_ids_to_tokens(ids[0, players].tolist())

        def encode(mask: np.ndarray) -> Any:
            m = torch.as_tensor(mask, device=device)
            b_ids, b_att = ids.repeat(len(m), 1), att.repeat(len(m), 1).clone()
            if masking == "attention":
                b_att[:, players] = m.to(b_att.dtype)
            else:
                b_ids[:, players] = torch.where(
                    m,
                    b_ids[:, players],
                    torch.full_like(b_ids[:, players], tokenizer.mask_token_id),
                )
            with torch.no_grad():
                hidden = model(input_ids=b_ids, attention_mask=b_att).last_hidden_state
            if pooling == "cls":
                return hidden[:, 0]
            w = b_att.unsqueeze(-1).to(hidden.dtype)
            return (hidden * w).sum(1) / w.sum(1).clamp_min(1e-9)

        return encode, len(players), names

    enc_a, n_a, names_a = side(text_a)
    enc_b, n_b, names_b = side(text_b)
    return DualEncoderGame(
        enc_a, enc_b, n_a, n_b, batch_size=batch_size, names_a=names_a, names_b=names_b
    )
