"""The masking adapters on real model classes: a Hugging Face CLIPModel built from a config
(values equal the model's own logits on the masked inputs; BOS/EOS kept) and the real
pretrained MiniLM (identical words across the sentence pair interact most)."""

import numpy as np
import pytest
import torch
from paperplug_fixlip import FIxLIP, clip_game, exact_fwbii, text_pair_game
from paperplug_fixlip.embedded import BOS, EOS, make_mosaics, minilm, tiny_clip

import paperplug


@pytest.fixture(scope="module")
def clip_case():
    model = tiny_clip(seed=1).eval()
    data = make_mosaics(1, seed=2, split="test", min_digits=3)
    k = int(data.attention[0].sum())
    return model, data.images[:1], data.ids[:1, :k]


def test_clip_values_are_the_models_logits_on_masked_inputs(clip_case):
    model, image, ids = clip_case
    game = clip_game(model, image, ids)
    assert game.n_a == 16 and game.n_b == ids.shape[1] - 2  # BOS and EOS are not players
    assert ids[0, 0] == BOS and ids[0, -1] == EOS
    keep = np.ones((1, 16), bool)
    keep[0, 5] = False  # patch (1, 1): pixels 4..7 × 4..7 zeroed
    text_keep = np.ones((1, game.n_b), bool)
    text_keep[0, 0] = False  # the first word removed through the attention mask
    value = game.cross_values(keep, text_keep)[0, 0]
    pixels = torch.as_tensor(image, dtype=torch.float32).clone()
    pixels[:, :, 4:8, 4:8] = 0.0
    attention = torch.ones(1, ids.shape[1], dtype=torch.long)
    attention[0, 1] = 0
    with torch.no_grad():
        logits = model(
            input_ids=torch.as_tensor(ids), attention_mask=attention, pixel_values=pixels
        )
    assert value == pytest.approx(float(logits.logits_per_image[0, 0]), rel=1e-5)


def test_clip_explained_through_the_registered_component(clip_case):
    model, image, ids = clip_case
    explainer = paperplug.load(
        "explainer", "fixlip", budget_a=256, budget_b=2 ** (ids.shape[1] - 2)
    )
    result = explainer.explain(model, {"pixel_values": image, "input_ids": ids})
    assert result.kind == "interaction" and result.meta["n_a"] == 16
    # both samples, plus the empty coalition (one pass per encoder) that ν is relative to
    assert result.meta["encoder_calls"] == 256 + 2 ** (ids.shape[1] - 2) + 2
    with pytest.raises(ValueError, match="pixel_values"):
        explainer.explain(model, {"input_ids": ids})
    with pytest.raises(ValueError, match="whole number"):
        clip_game(model, np.zeros((1, 1, 15, 15)), ids)
    with pytest.raises(ValueError, match="input_ids"):
        clip_game(model, image, ids[0])


def test_minilm_identical_words_interact_most():
    """Exact FWBII (2^4 + 2^5 passes) on "a yellow hydrant" × "the hydrant is yellow": the
    two largest cross-sentence interactions pair a token with the same token."""
    model, tokenizer = minilm()
    game = text_pair_game(model, tokenizer, "a yellow hydrant", "the hydrant is yellow")
    assert game.names_a == ["a", "yellow", "hydra", "##nt"]
    result = exact_fwbii(game)
    names = game.names
    top = [(names[i], names[j]) for i, j, _ in result.top_pairs(2)]
    assert all(a == b for a, b in top), top
    with pytest.raises(ValueError, match="non-empty"):
        text_pair_game(model, tokenizer, "", "x")


def test_explain_rejects_unknown_models():
    with pytest.raises(TypeError, match="model must be"):
        FIxLIP().explain(42, 3)
    with pytest.raises(ValueError, match="inputs=n"):
        FIxLIP().explain(lambda c: c.sum(1), "three")
    with pytest.raises(ValueError, match="p must"):
        FIxLIP(p=1.0)


def test_siglip_values_are_its_logits_up_to_the_bias():
    """SigLIP: no BOS, the final EOS kept; ν(T) − ν(∅) is free of SigLIP's logit bias."""
    from transformers import SiglipConfig, SiglipModel

    config = SiglipConfig(
        text_config=dict(
            vocab_size=20,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=8,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=16,
            patch_size=8,
        ),
    )
    with paperplug.seeded_torch(0):
        model = SiglipModel(config).eval()
        pixels = torch.randn(1, 3, 16, 16)
    ids = np.array([[5, 6, 7, 1]])
    game = clip_game(model, pixels, ids)
    assert (game.n_a, game.n_b) == (4, 3)
    full = game.cross_values(np.ones((1, 4), bool), np.ones((1, 3), bool))[0, 0]
    with torch.no_grad():
        out = model(input_ids=torch.as_tensor(ids), pixel_values=pixels)
    assert full + float(model.logit_bias.detach()) == pytest.approx(
        float(out.logits_per_image[0, 0]), rel=1e-5
    )
    baseline = clip_game(model, pixels, ids, image_masking="baseline", baseline_image=pixels)
    no_image = baseline.cross_values(np.zeros((1, 4), bool), np.ones((1, 3), bool))[0, 0]
    assert no_image == pytest.approx(full, rel=1e-6)  # the baseline is the image itself
    with pytest.raises(ValueError, match="mask_token_id"):
        clip_game(model, pixels, ids, text_masking="mask_token")
