"""Masking adapters (§3, "removing players"): image patches are zeroed after the processor's
normalisation (the dataset's mean colour) or replaced by a baseline image; text tokens are
removed through the attention mask, the special tokens at the ends always kept; the
alternative replaces them by a [MASK]/pad id. Each adapter returns a DualEncoderGame."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug.checks import (
    check_array,
    check_choice,
    check_device,
    check_scalar,
    check_sequence,
    check_tensor,
    check_type,
)
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


def _dual_encoder(model: Any) -> Any:
    if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
        raise TypeError("model must be a dual encoder with get_image_features/get_text_features")
    return model


def _keep(keep: Any, model: Any) -> tuple[str, ...]:
    """The end tokens kept out of the players: ("first", "last") for CLIP, ("last",) SigLIP."""
    if keep is None:
        return ("last",) if "siglip" in str(model.config.model_type) else ("first", "last")
    items = check_sequence(keep, "keep", min_len=0)
    return tuple(check_choice(k, "keep", ("first", "last")) for k in items)


def _token_ids(ids: Any, name: str, config: Any) -> Any:
    """(1, L) token ids within the text model's vocabulary and positions."""
    ids = check_tensor(ids, name, dtype="int", shape=(1, None))
    vocab, longest = config.vocab_size, getattr(config, "max_position_embeddings", None)
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab):
        raise ValueError(f"{name} must lie in [0, {vocab}) (the model's vocabulary)")
    if longest is not None and ids.shape[1] > longest:
        raise ValueError(f"{name} holds {ids.shape[1]} tokens, beyond the model's {longest}")
    return ids


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

    model = _dual_encoder(_load(model, "AutoModel"))
    check_choice(image_masking, "image_masking", ("zero", "baseline"))
    check_choice(text_masking, "text_masking", ("attention", "mask_token"))
    check_scalar(batch_size, "batch_size", "int", low=1)
    device = check_device(device) if device is not None else next(model.parameters()).device
    vision, text = model.config.vision_config, model.config.text_config
    patch, size = int(vision.patch_size), vision.image_size
    channels = int(getattr(vision, "num_channels", 3))
    pixel_values = check_tensor(pixel_values, "pixel_values", ndim=4).to(torch.float32)
    _, _, height, width = pixel_values.shape
    if height % patch or width % patch:
        raise ValueError(
            f"pixel_values: image {height}x{width} is not a whole number of {patch}-pixel patches"
        )
    want = (1, channels, *((size, size) if isinstance(size, int) else tuple(size)))
    if tuple(pixel_values.shape) != want:
        raise ValueError(
            f"pixel_values must be {want} for this model (one image of its size), "
            f"got {tuple(pixel_values.shape)}"
        )
    input_ids = _token_ids(input_ids, "input_ids", text)
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    else:
        attention_mask = check_tensor(attention_mask, "attention_mask", dtype="bool", ndim=2).long()
        if attention_mask.shape != input_ids.shape:
            raise ValueError(
                f"attention_mask {tuple(attention_mask.shape)} must have input_ids' shape "
                f"{tuple(input_ids.shape)}"
            )
    if image_masking == "baseline":
        if baseline_image is None:
            raise ValueError("image_masking='baseline' needs baseline_image")
        baseline = check_tensor(baseline_image, "baseline_image").to(torch.float32)
        try:
            baseline = baseline.expand_as(pixel_values).clone()
        except RuntimeError:
            raise ValueError(
                f"baseline_image {tuple(baseline.shape)} must broadcast to pixel_values' shape "
                f"{tuple(pixel_values.shape)}"
            ) from None
    else:
        baseline = torch.zeros_like(pixel_values)
    keep = _keep(keep, model)
    if mask_token_id is not None:
        check_scalar(mask_token_id, "mask_token_id", "int", low=0, high=text.vocab_size - 1)
    elif text_masking == "mask_token":
        raise ValueError("text_masking='mask_token' needs mask_token_id")
    players = _text_players(attention_mask, keep)
    if len(players) == 0:
        raise ValueError(
            f"attention_mask leaves no text token to explain besides the kept end tokens {keep}"
        )
    if tokens is not None:
        tokens = check_sequence(tokens, "tokens", str, what="token strings")
        if len(tokens) != len(players):
            raise ValueError(f"tokens must name the {len(players)} text players, got {len(tokens)}")
    pixel_values, input_ids = pixel_values.to(device), input_ids.to(device)
    attention_mask, baseline = attention_mask.to(device), baseline.to(device)
    rows, cols = height // patch, width // patch
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
    names_b = list(tokens) if tokens is not None else [f"t{int(j)}" for j in players]
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
    model = _dual_encoder(_load(model, "AutoModel"))
    processor = _load(processor, "AutoProcessor")
    if not callable(processor) or not hasattr(processor, "tokenizer"):
        raise TypeError(
            "processor must be a Hugging Face processor (callable, with a tokenizer), "
            f"got {type(processor).__name__}"
        )
    if not type(image).__module__.startswith("PIL."):  # an array: (H, W), (H, W, C), (C, H, W)
        check_array(image, "image", dtype="numeric", ndim=(2, 3))
    check_type(text, "text", str)
    if not text.strip():
        raise ValueError("text must be a non-empty string")
    inputs = processor(images=image, text=text, return_tensors="pt", padding=True)
    keep = _keep(kw.get("keep"), model)
    ids = _token_ids(inputs["input_ids"], "text", model.config.text_config)
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

    check_choice(masking, "masking", ("attention", "mask_token"))
    check_choice(pooling, "pooling", ("mean", "cls"))
    check_scalar(batch_size, "batch_size", "int", low=1)
    for name, text in (("text_a", text_a), ("text_b", text_b)):
        check_type(text, name, str)
        if not text.strip():
            raise ValueError(f"{name} must be a non-empty string")
    tokenizer = _load(tokenizer, "AutoTokenizer")
    if not callable(tokenizer) or not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise TypeError(
            f"tokenizer must be a Hugging Face tokenizer, got {type(tokenizer).__name__}"
        )
    if masking == "mask_token" and tokenizer.mask_token_id is None:
        raise ValueError("masking='mask_token' needs a tokenizer with a mask token")
    model = _load(model, "AutoModel")
    if not (callable(model) and hasattr(model, "parameters") and hasattr(model, "config")):
        raise TypeError(f"model must be a Hugging Face AutoModel, got {type(model).__name__}")
    device = check_device(device) if device is not None else next(model.parameters()).device
    longest = getattr(model.config, "max_position_embeddings", None)

    def side(text: str, name: str):
        enc = tokenizer(text, return_tensors="pt")
        ids, att = enc["input_ids"].to(device), enc["attention_mask"].to(device)
        if longest is not None and ids.shape[1] > longest:
            raise ValueError(f"{name} is {ids.shape[1]} tokens long, beyond the model's {longest}")
        players = torch.as_tensor(_text_players(att.cpu(), ("first", "last")), device=device)
        if len(players) == 0:
            raise ValueError(f"{name} has no token to explain besides [CLS] and [SEP]")
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

    enc_a, n_a, names_a = side(text_a, "text_a")
    enc_b, n_b, names_b = side(text_b, "text_b")
    return DualEncoderGame(
        enc_a, enc_b, n_a, n_b, batch_size=batch_size, names_a=names_a, names_b=names_b
    )
