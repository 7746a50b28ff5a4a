import math
import random

import pytest

from paperplug.harness import Timer, best_of, demo_parser, fmt_ci, mean_ci, table
from paperplug.testing import global_rng_untouched


def test_demo_parser_shares_out_and_seed():
    args = demo_parser("my_pkg").parse_args([])
    assert (str(args.out), args.seed) == ("out/my_pkg", 0)
    assert demo_parser("x").parse_args(["--seed", "3", "--out", "o"]).seed == 3


def test_mean_ci_is_students_t_with_scipy_else_normal():
    mean, half = mean_ci([1.0, 2.0, 3.0])
    try:  # the core depends on pluggy alone: scipy may be absent
        import scipy  # noqa: F401

        quantile = 4.302652729911275  # t_{0.975, 2}
    except ImportError:
        quantile = 1.959963984540054  # the normal's 0.975 quantile
    # sd = 1, n = 3
    assert mean == 2.0 and half == pytest.approx(quantile / math.sqrt(3))
    assert math.isnan(mean_ci([5.0])[1]) and fmt_ci([5.0]) == "5.000"
    with pytest.raises(ValueError, match="at least one value"):
        mean_ci([])


def test_table_aligns_and_formats():
    text = table([["a", 1.23456, 3], ["long name", None, 10]], ["name", "x", "n"], digits=2)
    lines = text.splitlines()
    assert lines[0].split() == ["name", "x", "n"] and lines[2].split() == ["a", "1.23", "3"]
    assert lines[3].split() == ["long", "name", "-", "10"]
    assert lines[0].index("x") == lines[2].index("1.23") == lines[3].index("-  ") + 0
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        table([[1]], ["a", "b"])


def test_best_of_returns_the_result_and_the_smallest_time():
    calls = []
    result, seconds = best_of(lambda: calls.append(1) or len(calls), repeat=4)
    assert result == 4 and len(calls) == 4 and seconds >= 0
    with pytest.raises(ValueError, match="repeat"):
        best_of(lambda: None, repeat=0)


def test_timer_measures():
    with Timer() as t:
        sum(range(1000))
    assert 0 <= t.seconds < 1 and 0 <= t.cpu_seconds < 1


def test_single_thread_never_imports_torch():
    import subprocess
    import sys

    code = "import sys; from paperplug.harness import single_thread; single_thread(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_global_rng_untouched_catches_a_global_draw():
    with global_rng_untouched():
        random.Random(0).random()  # a generator of its own: fine
    with pytest.raises(AssertionError, match="global random state"), global_rng_untouched():
        random.random()


def test_seeded_torch_is_reproducible_and_restores_the_callers_state():
    torch = pytest.importorskip("torch")
    from paperplug import seeded_torch

    torch.manual_seed(123)
    with global_rng_untouched():
        with seeded_torch(7):
            a = torch.rand(3)
        with seeded_torch(7):
            b = torch.rand(3)
    assert torch.equal(a, b)
    with pytest.raises(TypeError, match="seed must be an int"), seeded_torch("7"):
        pass
