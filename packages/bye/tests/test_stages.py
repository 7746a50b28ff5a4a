"""Each stage against a closed form, a brute-force reference, or a planted structure."""

import copy
import math
import warnings

import numpy as np
import pytest
import torch
from paperplug_bye import (
    BYE,
    NO_BACKDOOR,
    AttentionExtractor,
    TinyProcessor,
    attention_entropy,
    cluster_suspicious,
    eager_attention,
    encode_prompts,
    encode_with_answers,
    entropy_matrix,
    filter_dataset,
    fine_tune,
    gaussian_kl,
    image_token_mask,
    last_token_attention,
    model_device,
    profile_layers,
    row_digest,
    synthetic_vqa,
    tiny_llava,
    to_device,
    trained_on,
    unseen_rows,
)

from paperplug.testing import global_rng_untouched, same


@pytest.fixture(scope="module")
def tiny():
    return tiny_llava(seed=3)


def test_entropy_uniform_is_log_n_and_one_hot_is_zero():
    for n in (1, 2, 16, 576):
        h = attention_entropy(np.full(n, 0.37))
        assert h == pytest.approx(-math.log(1 / n + 1e-8), rel=1e-12)  # the paper's eps offset
        assert h == pytest.approx(math.log(n), abs=1e-5)
        one_hot = np.zeros(n)
        one_hot[n // 2] = 5.0
        assert attention_entropy(one_hot) == pytest.approx(0.0, abs=1e-7)
    assert attention_entropy(np.ones(16), relative=True) == pytest.approx(1.0, abs=1e-6)


def test_entropy_matches_brute_force_and_fills_nan_with_column_mean():
    rng = np.random.default_rng(0)
    att = rng.uniform(size=(3, 4, 9))  # (samples, layers, image tokens)
    p = att / att.sum(-1, keepdims=True)
    ref = np.array([[-sum(q * math.log(q + 1e-8) for q in row) for row in s] for s in p])
    np.testing.assert_allclose(entropy_matrix(list(torch.tensor(att))), ref, rtol=1e-12)
    maps = [torch.tensor(a) for a in att]
    maps[1][2] = 0.0  # an all-zero attention row gives NaN: filled with the layer's mean
    E = entropy_matrix(maps)
    assert E[1, 2] == pytest.approx((ref[0, 2] + ref[2, 2]) / 2)


@pytest.mark.parametrize("bad", [np.array([0.5, -0.1]), np.array([np.nan, 1.0]), np.zeros((2, 0))])
def test_entropy_rejects_bad_attention(bad):
    with pytest.raises(ValueError, match="attention"):
        attention_entropy(bad)


def test_image_token_mask_selects_exactly_the_image_tokens(tiny):
    model, processor = tiny
    rows = synthetic_vqa(3, seed=0)
    rows[1] = {**rows[1], "question": "what color is it ? what shape is it ?"}  # longer: padding
    batch = encode_prompts(processor, rows)
    mask = image_token_mask(batch["input_ids"], model.config.image_token_index)
    assert mask.sum(1).tolist() == [16, 16, 16]
    for row in mask:  # contiguous, right after the "user :" prefix
        pos = torch.nonzero(row).ravel()
        assert pos.tolist() == list(range(int(pos[0]), int(pos[0]) + 16))
    maps = AttentionExtractor(model, processor).extract(rows)
    assert [tuple(m.shape) for m in maps] == [(2, 16)] * 3
    # a callable mask for variable image-token counts: keep the first 5 image tokens
    first5 = lambda b: (b["input_ids"] == 1) & ((b["input_ids"] == 1).cumsum(1) <= 5)  # noqa: E731
    maps5 = AttentionExtractor(model, processor, image_token_mask=first5).extract(rows)
    for full, part in zip(maps, maps5, strict=True):
        torch.testing.assert_close(part, full[:, :5])


def test_last_row_hook_equals_the_full_attention_maps(tiny):
    model, processor = tiny
    rows = synthetic_vqa(4, seed=1)
    rows[0] = {**rows[0], "question": "what shape is it ? what color is it ?"}
    batch = encode_prompts(processor, rows)
    got = last_token_attention(model, batch)  # (batch, layers, seq)
    with torch.no_grad():
        full = model(**batch, output_attentions=True).attentions  # layers x (batch, heads, T, T)
    last = batch["attention_mask"].sum(1) - 1  # right padding
    for b in range(4):
        for layer, att in enumerate(full):
            torch.testing.assert_close(got[b, layer], att[b, :, last[b], :].mean(0))


def test_eager_attention_is_forced_and_restored(tiny):
    model, processor = tiny
    model.set_attn_implementation("sdpa")
    try:
        batch = encode_prompts(processor, synthetic_vqa(2, seed=2))
        att = last_token_attention(model, batch)
        assert torch.isfinite(att).all() and att.shape == (2, 2, batch["input_ids"].shape[1])
        assert model.config._attn_implementation == "sdpa"
        with eager_attention(model):
            assert model.config.text_config._attn_implementation == "eager"
    finally:
        model.set_attn_implementation("eager")


def test_answer_labels_cover_exactly_the_answer_tokens(tiny):
    _, processor = tiny
    rows = synthetic_vqa(3, seed=4)
    batch = encode_with_answers(processor, rows)
    labelled = batch["labels"] != -100
    assert labelled.sum(1).tolist() == [1, 1, 1]
    for b, row in enumerate(rows):
        assert processor.vocab[int(batch["labels"][b][labelled[b]][0])] == row["answer"]


def test_gaussian_kl_closed_form_against_numerical_integral():
    x = np.linspace(-30, 30, 600001)
    p = np.exp(-((x - 1.0) ** 2) / (2 * 0.5**2)) / (0.5 * math.sqrt(2 * math.pi))
    q = np.exp(-((x - 3.0) ** 2) / (2 * 2.0**2)) / (2.0 * math.sqrt(2 * math.pi))
    integral = np.trapezoid(p * np.log(p / q + 1e-300), x)
    assert gaussian_kl(1.0, 0.5, 3.0, 2.0) == pytest.approx(integral, rel=1e-4)
    assert gaussian_kl(2.0, 1.3, 2.0, 1.3) == pytest.approx(0.0, abs=1e-12)


def _columns(seed=0, n=300):
    rng = np.random.default_rng(seed)
    bimodal = np.r_[rng.normal(0.2, 0.05, n // 10), rng.normal(2.5, 0.15, n - n // 10)]
    unimodal = rng.normal(2.5, 0.2, n)
    high_outlier = np.r_[rng.normal(2.5, 0.2, n - 1), 40.0]
    low_outlier = np.r_[rng.normal(2.5, 0.2, n - 1), -40.0]
    return np.c_[bimodal, unimodal, high_outlier, low_outlier]


def test_profiling_rule_on_bimodal_unimodal_and_degenerate_outlier_columns():
    E = _columns()
    paper = profile_layers(E, variant="paper")
    robust = profile_layers(E, variant="robust")
    assert paper.sensitive == [0, 2, 3]  # the paper's rule accepts both outlier splits
    assert robust.sensitive == [0]  # the robust rule: low mode a minority of >= 2%
    fit = paper.fits[0]
    assert fit.means[0] == pytest.approx(0.2, abs=0.03) and fit.weights[0] == pytest.approx(
        0.1, abs=0.01
    )
    assert fit.kl == pytest.approx(
        gaussian_kl(*fit.means[:1], fit.stds[0], fit.means[1], fit.stds[1])
    )
    assert paper.ranking[0] in (0, 2, 3) and paper.ranking[-1] == 1
    assert profile_layers(E, variant="paper", separation=100.0).sensitive == [2, 3]


def test_clustering_flags_the_planted_low_entropy_rows_and_robust_zscores_help():
    rng = np.random.default_rng(1)
    n, planted = 400, np.arange(0, 400, 10)
    E = np.c_[rng.normal(2.5, 0.1, n), rng.normal(25.0, 1.0, n)]  # layer 1 on a 10x scale
    E[planted, 0] = rng.normal(0.3, 0.05, planted.size)
    E[planted, 1] = rng.normal(14.0, 0.5, planted.size)
    for variant in ("paper", "robust"):
        out = cluster_suspicious(E, [0, 1], variant=variant)
        assert np.flatnonzero(out.flags).tolist() == planted.tolist()
    z = cluster_suspicious(E, [0, 1], variant="robust").scores
    np.testing.assert_allclose(z, ((E - E.mean(0)) / E.std(0)).mean(1))
    minority = cluster_suspicious(-E, [0], direction="minority")  # poison now the high mode
    assert np.flatnonzero(minority.flags).tolist() == planted.tolist()


def test_ashman_test_admits_a_small_spread_low_mode_the_paper_rule_rejects():
    # the bench's 5% patch shape: 20 of 400 rows partially collapsed (spread 0..1.6 nats) and
    # 8 clean rows in a low tail in layer 0; layer 1 splits the clean rows by answer class
    # into two tight modes (46% / 54%)
    rng = np.random.default_rng(1)
    n, planted, tail = 400, np.arange(0, 400, 20), np.arange(1, 160, 20)
    E = np.c_[rng.normal(2.4, 0.15, n), np.where(np.arange(n) % 50 < 23, 1.95, 2.41)]
    E[:, 1] += rng.normal(0, 0.05, n)
    E[planted, 0] = rng.uniform(0.0, 1.6, planted.size)
    E[tail, 0] = rng.uniform(1.6, 1.95, tail.size)
    paper = profile_layers(E, variant="paper")
    # the low component absorbs the tail and widens: |mu1-mu2| > 2(sd1+sd2) fails there
    assert paper.sensitive == [1]
    ashman = profile_layers(E, variant="paper", test="ashman")
    assert ashman.sensitive == [0, 1]
    for fit in ashman.fits:
        (m0, m1), (s0, s1) = fit.means, fit.stds
        assert fit.ashman_d == pytest.approx(math.sqrt(2) * (m1 - m0) / math.hypot(s0, s1))
        assert fit.bimodal == (fit.ashman_d > 2.0)
    # raw means let the 2-nat collapse outvote the 0.46-nat answer split; z-scores do not
    raw = BYE(test="ashman", standardize=False).detect(E, "robust")
    assert set(raw.removed) <= set(planted) | set(tail)
    assert len(set(raw.removed) & set(planted)) >= 0.9 * planted.size
    z = BYE(test="ashman").detect(E, "robust")
    assert len(z.removed) > 2 * (planted.size + tail.size)
    np.testing.assert_allclose(raw.clustering.scores, E.mean(1))
    with pytest.raises(ValueError, match="test"):
        BYE(test="dip")
    with pytest.raises(ValueError, match="test"):
        profile_layers(E, test="dip")


def test_no_sensitive_layer_is_reported_and_nothing_removed():
    rows = synthetic_vqa(50, seed=0)
    E = np.random.default_rng(0).normal(2.5, 0.1, (50, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no backdoor found" is an answer, not a warning
        verdict = BYE().check(rows, {"entropy": E})
    assert verdict.valid and verdict.risk == 0.0 and not verdict.details["backdoor_found"]
    assert verdict.reason == NO_BACKDOOR.format("collapse")
    assert verdict.details["removed"] == [] and len(verdict.payload) == 50
    with pytest.raises(ValueError, match="no sensitive layer"):
        cluster_suspicious(E, [])


def test_filter_dataset_keeps_order_and_leaves_input_alone():
    data = [{"i": i} for i in range(6)]
    kept_rows, kept = filter_dataset(data, [4, 1])
    assert kept == [0, 2, 3, 5] and [r["i"] for r in kept_rows] == kept and len(data) == 6
    with pytest.raises(ValueError, match="out of range"):
        filter_dataset(data, [6])


@pytest.mark.parametrize(
    ("payload", "context", "error", "message"),
    [
        ("not rows", None, TypeError, "sequence of rows"),
        ([], None, ValueError, "empty"),
        ([{"image": 0, "question": "q"}], None, ValueError, "lacks"),
        (synthetic_vqa(4), None, ValueError, "model fine-tuned on these rows"),
        (synthetic_vqa(4), {"entropy": np.ones((3, 2))}, ValueError, "3 rows for 4"),
        (synthetic_vqa(4), {"entropy": np.full((4, 2), np.nan)}, ValueError, "NaN"),
    ],
)
def test_bad_inputs_rejected_with_a_clear_message(payload, context, error, message):
    with pytest.raises(error, match=message):
        BYE().check(payload, context)


def test_bad_parameters():
    with pytest.raises(ValueError, match="variant"):
        BYE(variant="plus")
    with pytest.raises(ValueError, match="min_gap"):
        BYE(min_gap=-1.0)
    with pytest.raises(ValueError, match="direction"):
        BYE(direction="high")
    with pytest.raises(ValueError, match="separation"):
        profile_layers(np.ones((4, 2)), separation=0)
    with pytest.raises(ValueError, match="entropy must be 2-dimensional"):
        profile_layers(np.ones(4))
    with pytest.raises(ValueError, match="entropy is empty or too small: needs at least 2 rows"):
        profile_layers(np.ones((1, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert profile_layers(_columns()[:, :1]).sensitive == [0]


def test_collapse_rule_needs_a_minority_low_mode_log3_below_the_rest():
    # layer 0: answer classes attend differently (two tight modes 0.5 nats apart, 45/55):
    # bimodal under the paper's test, but no collapse. Layer 1: 10% of rows collapsed.
    rng = np.random.default_rng(2)
    n, planted = 300, np.arange(0, 300, 10)
    classes = np.where(np.arange(n) % 20 < 9, 2.0, 2.5) + rng.normal(0, 0.05, n)
    collapsed = rng.normal(2.5, 0.1, n)
    collapsed[planted] = rng.normal(0.3, 0.05, planted.size)
    E = np.c_[classes, collapsed]
    assert profile_layers(E, variant="paper").sensitive == [0, 1]
    profile = profile_layers(E)  # the default rule
    assert profile.sensitive == profile.scored == [1]
    assert profile.gaps == pytest.approx([0.5, 2.2], abs=0.05)
    assert np.flatnonzero(BYE().detect(E).clustering.flags).tolist() == planted.tolist()
    # the gap threshold is exactly min_gap, in the matrix's units
    gap = profile.fits[1].gap
    assert profile_layers(E, min_gap=gap - 1e-9).sensitive == [1]
    assert profile_layers(E, min_gap=gap + 1e-9).sensitive == []
    # among several collapsed layers the one with the largest gap is scored
    E3 = np.c_[E, E[:, 1] * 0.6 + 1.0]  # the same rows, 0.6 times the gap
    assert profile_layers(E3).sensitive == [1, 2] and profile_layers(E3).scored == [1]
    # on the class layer alone the default rule finds no backdoor; the paper's removes a class
    verdict = BYE().check(synthetic_vqa(n, seed=1), {"entropy": classes[:, None]})
    assert not verdict.details["backdoor_found"] and verdict.details["removed"] == []
    assert len(verdict.details["paper"]["removed"]) == int((np.arange(n) % 20 < 9).sum())


def test_collapse_rule_rejects_a_majority_low_mode():
    # more than half the rows in the low mode: the clean rows would be the ones removed
    rng = np.random.default_rng(3)
    E = np.r_[rng.normal(0.3, 0.05, 180), rng.normal(2.5, 0.1, 120)][:, None]
    assert profile_layers(E, variant="paper").sensitive == [0]
    assert profile_layers(E).sensitive == []


def _single_row_maps(model, processor, rows):
    return [AttentionExtractor(model, processor, batch_size=1).extract([r])[0] for r in rows]


def test_left_padding_reads_the_last_real_token_and_the_image_tokens():
    model, processor = tiny_llava(seed=4, padding_side="left")  # as LLaVA pads for batching
    rows = synthetic_vqa(3, seed=5)
    rows[0] = {**rows[0], "question": "what color is it ? what shape is it ?"}  # longest
    batch = encode_prompts(processor, rows)
    assert (batch["attention_mask"][:, -1] == 1).all() and (
        batch["attention_mask"][1:, 0] == 0
    ).all()
    got = last_token_attention(model, batch)
    with torch.no_grad():
        full = model(**batch, output_attentions=True).attentions
    for layer, att in enumerate(full):  # the last real token is the last column
        torch.testing.assert_close(got[:, layer], att[:, :, -1, :].mean(1))
    batched = AttentionExtractor(model, processor, batch_size=3).extract(rows)
    for a, b in zip(batched, _single_row_maps(model, processor, rows), strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)  # no padding in a batch of one
    # right and left padding read the same positions
    right = AttentionExtractor(model, TinyProcessor(padding_side="right")).extract(rows)
    for a, b in zip(batched, right, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_variable_image_token_counts_pixtral_tower_left_padded():
    model, processor = tiny_llava(seed=5, vision="pixtral", padding_side="left")
    rows = synthetic_vqa(3, seed=6, image_size=24)
    rows[1] = {**rows[1], "image": rows[1]["image"][:, :16, :16]}
    rows[2] = {**rows[2], "image": rows[2]["image"][:, :8, :12]}
    batch = encode_prompts(processor, rows)
    mask = image_token_mask(batch["input_ids"], model.config.image_token_index)
    assert mask.sum(1).tolist() == [36, 16, 6] and batch["image_sizes"].tolist() == [
        [24, 24], [16, 16], [8, 12]
    ]  # fmt: skip
    maps = AttentionExtractor(model, processor, batch_size=3).extract(rows)
    assert [tuple(m.shape) for m in maps] == [(2, 36), (2, 16), (2, 6)]
    for a, b in zip(maps, _single_row_maps(model, processor, rows), strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    E = entropy_matrix(maps, relative=True)  # H / log N makes the counts comparable
    for row, m in zip(E, maps, strict=True):
        np.testing.assert_allclose(row, attention_entropy(m) / math.log(m.shape[-1]))
    assert ((E >= 0) & (E <= 1 + 1e-9)).all()


def test_fine_tune_records_its_rows_and_leaves_inputs_and_global_rng_alone():
    model, processor = tiny_llava(seed=6)
    rows = synthetic_vqa(24, seed=7, kinds=("color",))
    before = (copy.deepcopy(rows), copy.deepcopy(model.state_dict()))
    with global_rng_untouched("fine_tune"):
        a = fine_tune(model, processor, rows, epochs=1, seed=3)
        b = fine_tune(model, processor, rows, epochs=1, seed=3)
        tiny_llava(seed=8)
    assert same(before[0], rows) and same(before[1], model.state_dict())
    assert same(a.state_dict(), b.state_dict())  # the same seed, the same model
    assert trained_on(model) is None and trained_on(a) == {row_digest(r) for r in rows}
    assert unseen_rows(a, rows[:5]) == [] and unseen_rows(model, rows) is None
    other = synthetic_vqa(3, seed=8, kinds=("color",))
    assert unseen_rows(a, [rows[0], *other]) == [1, 2, 3]
    relabelled = {**rows[0], "answer": "banana"}  # same image, another answer: another row
    assert unseen_rows(a, [relabelled]) == [0]


def test_inputs_follow_the_model_device():
    model, processor = tiny_llava(seed=9)
    assert model_device(model) == torch.device("cpu")
    batch = encode_prompts(processor, synthetic_vqa(2, seed=9), device="cpu")
    moved = to_device({**batch, "note": "kept"}, "meta")
    assert all(v.device.type == "meta" for k, v in moved.items() if k != "note")
    assert moved["note"] == "kept" and batch["input_ids"].device.type == "cpu"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_model_gives_the_cpu_entropy_and_fine_tunes():
    model, processor = tiny_llava(seed=10)
    rows = synthetic_vqa(8, seed=10, kinds=("color",))
    cpu = BYE(model, processor).entropy(rows)
    gpu_model = copy.deepcopy(model).cuda()
    np.testing.assert_allclose(BYE(gpu_model, processor).entropy(rows), cpu, atol=1e-4)
    tuned = fine_tune(gpu_model, processor, rows, epochs=1)
    assert model_device(tuned).type == "cuda" and unseen_rows(tuned, rows) == []
