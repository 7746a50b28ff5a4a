"""Each stage alone: exact values on small cases, planted effects, bad inputs rejected."""

import copy
import itertools
import math
import random

import pytest
from paperplug_ama import (
    AMAttack,
    BM25ToolRetriever,
    CandidateHistory,
    LLMProposer,
    ProposalContext,
    Scenario,
    Task,
    TemplateProposer,
    attractiveness,
    check_metadata,
    estimate_selection_rate,
    in_context_optimisation,
    load_scenarios,
    parse_tool_json,
    sample_slate,
    task_pool,
)
from paperplug_llm import ScriptedChatModel


class NameVictim:
    """Selects the first tool whose name contains `word`, else the first tool (top-1)."""

    def __init__(self, word):
        self.word = word

    def select(self, query, tools):
        return [next((i for i, t in enumerate(tools) if self.word in t["name"]), 0)]


@pytest.fixture
def travel():
    return load_scenarios(["travel"])[0]


def test_embedded_scenarios_shape():
    scenarios = load_scenarios()
    assert len(scenarios) == 10
    for s in scenarios:
        assert 5 <= len(s.tools) <= 6 and len(s.optimise) == 10 and len(s.held_out) == 30
        assert not {t.query for t in s.optimise} & {t.query for t in s.held_out}
        assert {t.gold for t in s.held_out} == set(s.tool_names)  # every tool is someone's gold


def test_attractiveness_closed_form():
    assert attractiveness(0.6, 0.4) == pytest.approx(0.6 + 0.5 * 0.2)
    assert attractiveness(0.3, 0.5, lam=1.0) == pytest.approx(0.1)
    assert attractiveness(0.7, 0.7) == pytest.approx(0.7)  # no bonus without improvement
    with pytest.raises(ValueError, match="sr"):
        attractiveness(1.2, 0.0)


def test_history_best_so_far_is_monotone_and_best_is_the_max():
    h, rng = CandidateHistory(), random.Random(0)
    for i in range(50):
        h.add({"name": f"t{i}", "description": "x"}, rng.random(), rng.random(), i, 10 * (i + 1))
    curve = [sr for _, sr in h.best_so_far()]
    assert all(a <= b for a, b in itertools.pairwise(curve))
    assert curve[-1] == max(e.sr for e in h.entries) == h.best().sr
    top = h.top(5)
    assert [e.value for e in top] == sorted((e.value for e in h.entries), reverse=True)[:5]


def test_slate_holds_gold_and_distinct_competitors(travel):
    rng = random.Random(0)
    for task in travel.optimise:
        slate = sample_slate(task, travel.tools, 5, rng)
        names = [t["name"] for t in slate]
        assert task.gold in names and len(set(names)) == len(names) == 5
    assert len(sample_slate(travel.optimise[0], travel.tools, 50, rng)) == len(travel.tools)


def test_selection_rate_deterministic_under_seed_and_exact_when_planted(travel):
    pool, cand = task_pool(travel, "optimise"), {"name": "zz_tool", "description": "d"}
    victim = BM25ToolRetriever()
    a = estimate_selection_rate(cand, pool, victim, trials=20, seed=3)
    b = estimate_selection_rate(cand, pool, victim, trials=20, seed=3)
    c = estimate_selection_rate(cand, pool, victim, trials=20, seed=4)
    assert a.records == b.records and a.rate == b.rate
    assert a.records != c.records
    assert estimate_selection_rate(cand, pool, NameVictim("zz"), trials=7).rate == 1.0
    assert (
        estimate_selection_rate(cand, pool, NameVictim("nomatch"), trials=7).rate
        == sum(
            r["slate"][0] == "zz_tool"
            for r in estimate_selection_rate(cand, pool, NameVictim("nomatch"), trials=7).records
        )
        / 7
    )
    with pytest.raises(ValueError, match="trials"):
        estimate_selection_rate(cand, pool, victim, trials=0)


def test_validity_constraints():
    q = ["Are there any nonstop flights from Boston to Dublin next Thursday?"]
    ok = {"name": "trip_helper", "description": "Finds flights and hotels for trips."}
    assert check_metadata(ok, q) == []
    assert "snake_case" in check_metadata({**ok, "name": "TripHelper"}, q)[0]
    assert "more than 60" in check_metadata({**ok, "description": "word " * 61}, q)[0]
    copied = {**ok, "description": "Find any nonstop flights from Boston to Dublin fast."}
    assert "5-gram" in check_metadata(copied, q)[0]
    assert check_metadata(copied, q, ngram=9) == []
    assert "impersonates" in check_metadata(ok, q, existing_names=["trip_helper"])[0]


def test_loop_rejects_invalid_proposals_and_respects_budget(travel):
    class Scripted:
        def initial(self, context, n, rng):
            return [{"name": "Bad Name", "description": "x"}, {"name": "zz_a", "description": "ok"}]

        def refine(self, context, history, n, rng):
            return [{"name": "zz_b", "description": "fine"}]

    pool = task_pool(travel, "optimise")
    ctx = ProposalContext([t.query for t, _ in pool], travel.tools)
    res = in_context_optimisation(
        pool, ctx, NameVictim("nomatch"), Scripted(), rounds=50, trials=4, budget=30, race_top=0
    )
    assert res.queries <= 30 and res.stopped == "budget" and len(res.history) == 7
    assert res.invalid[0]["tool"]["name"] == "Bad Name"
    hit = in_context_optimisation(pool, ctx, NameVictim("zz"), Scripted(), rounds=5, trials=4)
    assert hit.stopped == "target" and hit.rounds == 0 and hit.best.sr == 1.0


def test_stratified_trials_cover_tasks_equally_and_race_is_charged(travel):
    pool, cand = task_pool(travel, "optimise"), {"name": "zz_tool", "description": "d"}
    est = estimate_selection_rate(cand, pool, BM25ToolRetriever(), trials=20, seed=1)
    counts = {t.query: 0 for t, _ in pool}
    for r in est.records:
        counts[r["query"]] += 1
    assert set(counts.values()) == {2}

    class Counting(NameVictim):
        calls = 0

        def select(self, query, tools):
            Counting.calls += 1
            return super().select(query, tools)

    ctx = ProposalContext([t.query for t, _ in pool], travel.tools, domains=["travel"])
    res = in_context_optimisation(
        pool, ctx, Counting("nomatch"), TemplateProposer(), trials=10, budget=300, race_top=3
    )
    assert Counting.calls == res.queries <= 300 and len(res.race) == 3
    assert res.best.tool in [r["entry"].tool for r in res.race]
    won = max(res.race, key=lambda r: r["pooled_sr"])
    assert res.best.sr == won["pooled_sr"] == (won["entry"].sr * 10 + won["fresh_sr"] * 10) / 20


def test_template_credit_is_the_shrunk_mean_sr_gain():
    h = CandidateHistory()
    h.add({"name": "a", "description": "Hi. Key topics: x, y."}, 0.8, 0.0, 0, 1)
    h.add({"name": "b", "description": "Key topics: y."}, 0.2, 0.0, 0, 2)
    credit = TemplateProposer().credit(h.entries, prior=2.0)
    mean = 0.5
    assert credit["topic"]["x"] == pytest.approx((0.8 + 2 * mean) / 3 - mean)
    assert credit["topic"]["y"] == pytest.approx(0.0)
    assert credit["sentence"]["Hi."] == pytest.approx(credit["topic"]["x"])


def test_in_context_loop_beats_random_search_on_optimisation_sr():
    """Equal budget (the paper's 110 candidates x 20 trials), BM25 victim: the history-driven
    proposer finds tools of higher SR on the attacker's queries. Measured on seeds 0-5: AMA
    ahead on every seed, by 0.026-0.055 (mean 0.036); asserted here as the mean over three."""
    scenarios, victim = load_scenarios(), BM25ToolRetriever()
    sr = {}
    for use_history in (True, False):
        runs = [
            AMAttack(seed=s, use_history=use_history).run(victim, scenarios, budget=22000)
            for s in range(3)
        ]
        assert all(r.queries <= 22000 for r in runs)
        sr[use_history] = [sum(g["train_sr"] for g in r.meta["groups"]) / 10 for r in runs]
    assert sum(sr[True]) / 3 > sum(sr[False]) / 3 + 0.02


def test_bm25_matches_hand_computation():
    tools = [{"name": "a", "description": "cat cat dog"}, {"name": "b", "description": "dog"}]
    s = BM25ToolRetriever(k1=1.2, b=0.75).scores("cat", tools)
    lengths, avg = [4, 2], 3.0  # "a: cat cat dog" -> a cat cat dog
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    norm = 1.2 * (1 - 0.75 + 0.75 * lengths[0] / avg)
    assert s[0] == pytest.approx(idf * 2 * 2.2 / (2 + norm)) and s[1] == 0.0


def test_victim_choices_unchanged_without_attack_tool(travel):
    from paperplug_ama import benign_choices

    victim, pool = BM25ToolRetriever(), task_pool(travel, "held_out")
    before = benign_choices(pool, victim)
    AMAttack(trials=4, per_round=3, rounds=2).run(victim, travel, budget=40)
    assert benign_choices(pool, victim) == before


def test_llm_proposer_parses_and_shows_scores(travel):
    replies = ['{"name": "trip_hub", "description": "Plans trips."}', "not json"] * 3
    llm = ScriptedChatModel(replies)
    prop, rng = LLMProposer(llm), random.Random(0)
    ctx = ProposalContext([t.query for t in travel.optimise], travel.tools)
    got = prop.initial(ctx, 2, rng)
    assert got == [{"name": "trip_hub", "description": "Plans trips."}] and prop.failures == 1
    h = CandidateHistory()
    h.add({"name": "trip_hub", "description": "Plans trips."}, 0.35, 0.0, 0, 20)
    prop.refine(ctx, h.top(5), 1, rng)
    assert "selection rate 0.35" in llm.calls[-1][0][0]["content"]
    assert parse_tool_json('x {"Tool Name": "a_b", "Description": "d"} y') == {
        "name": "a_b",
        "description": "d",
    }


def test_template_proposer_is_seeded_and_valid(travel):
    ctx = ProposalContext([t.query for t in travel.optimise], travel.tools, domains=["travel"])
    a = TemplateProposer().initial(ctx, 8, random.Random(5))
    assert a == TemplateProposer().initial(ctx, 8, random.Random(5))
    assert all(check_metadata(t, ctx.tasks) == [] for t in a)


def test_bad_inputs_rejected_and_data_untouched(travel):
    with pytest.raises(ValueError, match="gold tool"):
        Scenario("x", travel.tools, [Task("q", "nope")], [Task("q", "nope")])
    with pytest.raises(ValueError, match="mode"):
        AMAttack(mode="sideways")
    with pytest.raises(TypeError, match="select"):
        AMAttack().run(object(), travel)
    data = {
        "domain": "d",
        "tools": copy.deepcopy(travel.tools),
        "queries": [["q1", "search_flights"], ["q2", "find_hotels"]],
    }
    before = copy.deepcopy(data)
    AMAttack(trials=2, per_round=2, rounds=1).run(BM25ToolRetriever(), data, budget=8)
    assert data == before


def test_held_out_measures_come_from_one_call_per_query(travel):
    from paperplug_ama import attack_success, held_out_choices, utility_under_attack

    class Counting(BM25ToolRetriever):
        calls = 0

        def select(self, query, tools):
            Counting.calls += 1
            return super().select(query, tools)

    pool, tool = task_pool(travel, "held_out"), {"name": "trip_hub", "description": "flights"}
    choices = held_out_choices(tool, pool, Counting(), seed=2)
    assert Counting.calls == len(pool) == 30
    assert [a for a, _ in choices] == attack_success(tool, pool, BM25ToolRetriever(), seed=2)
    kept = sum(g for _, g in choices) / 30
    assert kept == utility_under_attack(tool, pool, BM25ToolRetriever(), seed=2)
    assert not any(a and g for a, g in choices)  # top-1: one tool per query


def test_held_out_curve_follows_the_best_so_far_candidate(travel):
    from paperplug_ama import held_out_curve

    pool, h = task_pool(travel, "held_out"), CandidateHistory()
    h.add({"name": "zz_one", "description": "x"}, 0.2, 0.0, 0, 10)
    h.add({"name": "other", "description": "x"}, 0.1, 0.0, 0, 20)  # worse: the curve holds
    h.add({"name": "zz_two", "description": "x"}, 0.9, 0.0, 1, 30)

    class Only:  # selects the tool named zz_two and nothing else
        def select(self, query, tools):
            return [i for i, t in enumerate(tools) if t["name"] == "zz_two"]

    victim = Only()
    curve = held_out_curve(h.entries, pool, victim)
    assert curve == [(10, 0.0), (20, 0.0), (30, 1.0)]
    assert held_out_curve([e.to_dict() for e in h.entries], pool, victim) == curve
