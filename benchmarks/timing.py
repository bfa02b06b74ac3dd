"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latencies_us(call: Callable[[T], object], items: Iterable[T], rounds: int) -> list[float]:
    """Per-call wall time in µs of `call(item)` over `rounds` passes, after one warm pass."""
    items = list(items)
    for item in items:
        call(item)
    samples = []
    for _ in range(rounds):
        for item in items:
            start = time.perf_counter_ns()
            call(item)
            samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


def median_ms(argv: list[str], runs: int, *, cwd: Path | None = None,
              env: dict[str, str] | None = None, check: bool = False) -> float:
    """Median wall time of running `argv` as a whole process (`check`: it must succeed)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, check=check, capture_output=True,
                       stdin=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def interleaved_ms(cases: Mapping[str, Callable[[], object]], runs: int
                   ) -> dict[str, list[float]]:
    """Each case's wall times in ms over `runs` rounds, the cases in turn within a round
    (a load burst on this shared machine then hits them all alike, not one whole
    block)."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, call in cases.items():
            start = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def medians(times: Mapping[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(samples) for name, samples in times.items()}
