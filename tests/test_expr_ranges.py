"""The unchecked path (operations whose operand ranges prove them safe) against the checked
path, which tests/test_expr_c.py compares with g++: same values, same faults, same lanes."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.expr import CType, EvalFault, compile_expr
from shmem_cli.spec.expr import evaluate as ev

from .cexpr import NAMES, VALUES, random_expression

SMALL = {
    "tx": [0, 1, 5, 31, 33, 1023],
    "n": [0, 3, 8, 100, 7, 1],
    "a": [0, -1, 7, -100, 12, 3],
    "b": [1, 2, -3, 0, 31, 46341],
    "L": [0, -3, 1 << 40, -(1 << 40), 5, 9],
    "U": [0, 5, 1 << 40, 77, 4294967296, 123],
}


def outcome(text: str, env: dict[str, Any], live: Any) -> tuple[object, ...]:
    expr = compile_expr(text, NAMES)
    try:
        v = expr.evaluate(env, live)
    except EvalFault as fault:
        return ("fault", fault.message, fault.node.col, np.asarray(fault.where).tolist())
    return ("value", type(v).__name__, np.shape(v), np.asarray(v).tolist())


def random_env(rng: random.Random) -> tuple[dict[str, Any], Any]:
    values = SMALL if rng.random() < 0.7 else VALUES
    k = rng.randint(1, 6)
    picks = rng.sample(range(6), k)
    env: dict[str, Any] = {}
    for name, t in NAMES.items():
        xs = [values[name][i] for i in picks]
        stored = [x - (1 << 64) if x >= 1 << 63 else x for x in xs]
        if rng.random() < 0.3:
            env[name] = xs[0] if t is not CType.ULLONG or xs[0] < 1 << 63 else 5
        else:
            column = rng.random() < 0.5
            env[name] = np.array(stored, dtype=np.int64).reshape((k, 1) if column else (1, k))
    live = None
    if rng.random() < 0.5:
        live = np.array([[rng.random() < 0.6 for _ in range(k)] for _ in range(k)])
    return env, live


@pytest.mark.parametrize("seed", range(4))
def test_unchecked_path_agrees_with_checked(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    unchecked_used = 0
    plain = ev._unchecked
    for _ in range(400):
        text = random_expression(rng, depth=rng.choice([2, 3, 4, 5]))
        try:
            compile_expr(text, NAMES)
        except ShmemError:
            continue
        env, live = random_env(rng)
        calls: list[bool] = []

        def counting(*args: Any, plain: Any = plain, calls: list[bool] = calls) -> Any:
            out = plain(*args)
            calls.append(out[1] is not None)
            return out

        with monkeypatch.context() as m:
            m.setattr(ev, "_unchecked", counting)
            fast = outcome(text, env, live)
        with monkeypatch.context() as m:
            m.setattr(ev, "_unchecked", lambda *args: (0, None))
            m.setattr(ev, "_result_range", lambda *args: None)
            checked = outcome(text, env, live)
        assert fast == checked, (text, env, live)
        unchecked_used += sum(calls)
    assert unchecked_used > 100  # the comparison exercised the unchecked path


def row(*xs: int) -> Any:
    return np.array([xs], dtype=np.int64)


@pytest.mark.parametrize(
    ("text", "env"),
    [
        # the product -2^63 fits; the checked path judges 64-bit products through floats and
        # refuses it, and so near 2^63 the unchecked path must not answer differently
        ("L * b", {"L": row(-(1 << 62), 5), "b": 2}),
        ("L * b", {"L": row((1 << 63) - 1, 0), "b": 1}),
        ("a + b", {"a": row(2147483647, 0), "b": 1}),
        ("-a", {"a": row(-2147483648, 3)}),
        ("(int)n", {"n": row(4294967295, 1)}),
        ("a << b", {"a": row(1, 1), "b": row(1, 31)}),
        ("a >> b", {"a": row(-8, 8), "b": row(1, 32)}),
        ("tx / b", {"tx": row(7, 9), "b": row(1, 0)}),
        ("a % b", {"a": row(-7, 7), "b": row(3, -3)}),
    ],
)
def test_edges_agree(text: str, env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = outcome(text, env, None)
    monkeypatch.setattr(ev, "_unchecked", lambda *args: (0, None))
    monkeypatch.setattr(ev, "_result_range", lambda *args: None)
    assert outcome(text, env, None) == fast


@pytest.mark.parametrize("seed", range(4))
def test_a_known_range_holds_every_element(seed: int) -> None:
    """space.py skips its bounds scan of an index on the range's word: it must hold every
    element, live or not."""
    rng = random.Random(100 + seed)
    known_ranges = 0
    for _ in range(400):
        text = random_expression(rng, depth=rng.choice([1, 2, 3, 4]))
        try:
            expr = compile_expr(text, NAMES)
        except ShmemError:
            continue
        env, live = random_env(rng)
        try:
            value, known = expr.evaluate_with_range(env, live)
        except EvalFault:
            continue
        if known is None:
            continue
        known_ranges += 1
        values = np.asarray(value)
        assert known[0] <= values.min() and values.max() <= known[1], (text, env, live, known)
    assert known_ranges > 100
