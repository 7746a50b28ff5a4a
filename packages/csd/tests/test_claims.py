"""Claim segmentation: sentence boundaries with a minimum length, a maximum claim length."""

import pytest
from paperplug_csd import ClaimSegmenter


def test_boundaries_need_the_minimum_length():
    seg = ClaimSegmenter(min_tokens=3, max_claim_tokens=50)
    assert not seg.ends_claim("Hi.", 1)  # a full stop, but too short
    assert seg.ends_claim("Water boils at sea level.", 5)
    assert seg.ends_claim('He said "stop!"', 3)  # closing quote after the mark
    assert seg.ends_claim("Here is a list\n", 4)  # a newline ends a claim
    assert not seg.ends_claim("Pi is 3.14 and", 4)  # a dot inside a number is no boundary
    assert not seg.ends_claim("\n\n", 3)  # leading newlines open the next claim


def test_maximum_length_cuts_a_claim():
    seg = ClaimSegmenter(min_tokens=2, max_claim_tokens=4)
    assert seg.ends_claim("one two three four", 4)
    assert not seg.ends_claim("one two three", 3)


def test_split_claims_joins_back_and_cuts_where_the_stream_would():
    seg = ClaimSegmenter(min_tokens=3, max_claim_tokens=6)
    text = "Yes. Drink water every day. Sleep well at night!\nOne two three four five six seven"
    claims = seg.split_claims(text)
    assert "".join(claims) == text
    assert claims == [
        "Yes. Drink water every day. ",
        "Sleep well at night!\n",
        "One two three four five six ",
        "seven",
    ]


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"min_tokens": 0}, "min_tokens"),
        ({"max_claim_tokens": 2.5}, "max_claim_tokens"),
        ({"min_tokens": 9, "max_claim_tokens": 4}, "must not exceed"),
    ],
)
def test_bad_settings_are_rejected(kw, match):
    with pytest.raises(ValueError, match=match):
        ClaimSegmenter(**kw)


def test_split_claims_needs_text():
    with pytest.raises(TypeError, match="text must be a str"):
        ClaimSegmenter().split_claims(["a"])
