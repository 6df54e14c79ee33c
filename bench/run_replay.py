"""Trace-replay benchmark of the CUDA caching allocator on synthetic training traces.

Generates the synthetic transformer traces (bench/trace_gen.py), replays each through libc10c's
caching allocator over the stand-in driver in fake-address mode (bench/replay_trace.c), with and
without expandable segments, and prints PyTorch users' metrics as a table with the targets,
then writes the figures as JSON and, where numpy is importable (bench/png_chart.py draws with
it), as a PNG chart; without numpy the chart is skipped with a note and nothing else changes.

    bash tests/run.sh            # builds build/tests (the replayer and the stand-in)
    python bench/run_replay.py [--build build/tests] [--out /tmp/replay] [--quick] [--check]

--quick replays a 2-layer model for 5 steps (for CI); --check exits non-zero when a hard
target fails (multistream: an unsafe cross-stream reuse, or the negative control finding none;
static: device mallocs or frees in steady steps, hit rate below 0.999, address stability below
1, retries).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_gen

CONFIGS = {
    "native": "",
    "expandable": "expandable_segments:True",
}
# multistream also runs with stream-ordered reuse, and once as the negative control
EXTRA = {
    "multistream": {"expandable+ordered": "expandable_segments:True,stream_ordered_reuse:True"}
}


def replay(exe: Path, stub: Path, trace: Path, config: str, *flags: str) -> dict:
    """One replay; its JSON line as a dict."""
    env = dict(os.environ, C10C_CUDA_DRIVER=str(stub), C10C_STUB_FAKE="1")
    env.pop("C10C_ALLOC_CONF", None)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    out = subprocess.run(
        [str(exe), str(trace), "--config", config, *flags],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if not out.stdout.strip():
        raise RuntimeError(f"replay of {trace} ({config!r}) printed nothing: {out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(value: float | None, digits: int = 3) -> str:
    """A table cell ("-" for a figure the replay does not have)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


COLUMNS = [
    ("mallocs/step", "device_mallocs_per_step", 2),
    ("frees/step", "device_frees_per_step", 2),
    ("hit rate", "steady_hit_rate", 4),
    ("resv/alloc", "reserved_over_allocated", 3),
    ("Cmin/peak", "min_capacity_over_peak_live", 3),
    ("addr stab", "address_stability", 3),
    ("unsafe", "unsafe_reuses", 0),
    ("retries", "retries", 0),
    ("ns p50", "host_ns_p50", 0),
]


def run_all(args: argparse.Namespace, out: Path) -> dict[str, dict[str, dict]]:
    """Generates and replays every variant under every configuration."""
    build = Path(args.build)
    exe = Path(args.replay or build / "bench" / "replay_trace")
    stub = Path(args.stub or build / "tests" / "libc10c_cuda_stub.so")
    model = trace_gen.Model(layers=2) if args.quick else trace_gen.Model()
    steps = 5 if args.quick else 8
    results: dict[str, dict[str, dict]] = {}
    for variant in args.variants.split(","):
        path = out / f"{variant}.csv"
        trace_gen.write(trace_gen.generate(variant, model, steps, seed=0), str(path))
        configs = dict(CONFIGS, **EXTRA.get(variant, {}))
        repeat = "1" if args.quick else "3"
        results[variant] = {
            name: replay(exe, stub, path, config, "--repeat", repeat)
            for name, config in configs.items()
        }
        if variant == "multistream":
            results[variant]["control"] = replay(
                exe, stub, path, "", "--no-search", "--repeat", "0", "--skip-record-stream"
            )
    return results


def print_table(results: dict[str, dict[str, dict]]) -> None:
    """The metrics, one row per trace and allocator configuration."""
    header = f"| {'trace':<12}| {'allocator':<19}| {'peak live GiB':>13} |" + "".join(
        f" {c[0]:>12} |" for c in COLUMNS
    )
    print(header)
    print("|" + "|".join("-" * len(p) for p in header.split("|")[1:-1]) + "|")
    for variant, runs in results.items():
        for name, r in runs.items():
            control = name == "control"  # only its unsafe count means something
            cells = "".join(
                f" {fmt(math.nan if control and key != 'unsafe_reuses' else r[key], d):>12} |"
                for _, key, d in COLUMNS
            )
            label = "no record_stream" if control else name
            gib = r["peak_live_requested"] / 2**30
            print(f"| {variant:<12}| {label:<19}| {gib:>13.2f} |{cells}")


def hard_failures(results: dict[str, dict[str, dict]]) -> list[str]:
    """The targets that must hold on every run (see the module's docstring)."""
    failures = []
    for variant, runs in results.items():
        for name, r in runs.items():
            if name == "control":
                if r["unsafe_reuses"] == 0:
                    failures.append("multistream negative control found no unsafe reuse")
                continue
            if not r["ok"]:
                failures.append(f"{variant}/{name}: the replay failed")
            if variant == "multistream" and r["unsafe_reuses"] != 0:
                failures.append(f"{variant}/{name}: {r['unsafe_reuses']} unsafe reuses")
            if variant == "static":
                checks = [
                    (r["device_mallocs_per_step"] == 0, "device mallocs in steady steps"),
                    (r["device_frees_per_step"] == 0, "device frees in steady steps"),
                    (r["steady_hit_rate"] >= 0.999, f"hit rate {r['steady_hit_rate']}"),
                    (r["address_stability"] == 1.0, "address stability below 1"),
                    (r["retries"] == 0, "retries"),
                ]
                failures += [f"static/{name}: {why}" for ok, why in checks if not ok]
    return failures


def print_targets(results: dict[str, dict[str, dict]]) -> None:
    """The project's targets with both configurations' figures."""
    targets = [
        ("static resv/alloc <= 1.10", "static", "reserved_over_allocated", 1.10),
        ("varlen Cmin/peak <= 1.25", "varlen", "min_capacity_over_peak_live", 1.25),
    ]
    print("\ntargets:")
    for label, variant, key, bound in targets:
        if variant not in results:
            continue
        figures = ", ".join(f"{n} {results[variant][n][key]:.3f}" for n in CONFIGS)
        met = results[variant]["expandable"][key] <= bound
        print(f"  {label}: {figures} -> {'met' if met else 'MISSED'} with expandable segments")
    pairs = [r["host_ns_p50"] for rs in results.values() for n, r in rs.items() if n != "control"]
    print(f"  host malloc+free p50 <= 150 ns: {min(pairs):.0f}..{max(pairs):.0f} ns over the runs")
    if "multistream" in results:
        unsafe = {n: r["unsafe_reuses"] for n, r in results["multistream"].items()}
        print(f"  multistream unsafe reuses == 0: {unsafe} (the control must find some)")


def plot(results: dict[str, dict[str, dict]], png: Path) -> bool:
    """The two ratio metrics per trace, both configurations, with their targets.

    Returns False (and draws nothing) where numpy, which the chart is drawn with, is missing:
    the C library's tests (meson test) need no Python package.
    """
    try:
        import png_chart
    except ImportError as e:
        print(f"\nno chart: numpy is not importable ({e})")
        return False
    groups = list(results)
    names = list(CONFIGS)

    def values(key: str) -> list[list[float]]:
        return [
            [results[g][n][key] if n in results[g] else math.nan for g in groups] for n in names
        ]

    png_chart.bar_panels(
        str(png),
        "libc10c CUDA caching allocator: trace replay",
        groups,
        names,
        [
            ("smallest capacity / peak live bytes", values("min_capacity_over_peak_live"), 1.25),
            ("peak reserved / peak allocated", values("reserved_over_allocated"), 1.10),
        ],
        floor=0.9,
    )
    return True


def main() -> int:
    """Runs the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--build", default=str(root / "build" / "tests"))
    parser.add_argument("--replay", help="the replay_trace executable (default: in --build)")
    parser.add_argument("--stub", help="the stand-in driver (default: in --build)")
    parser.add_argument("--out", default="/tmp/c10c-replay")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--variants", default=",".join(trace_gen.VARIANTS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = run_all(args, out)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    model = "2-layer quick model, 5 steps" if args.quick else "T-small (GPT-2 small), 8 steps"
    print(f"trace replay: {model}, fake-address stand-in driver; peak live = requested bytes")
    print_table(results)
    print_targets(results)
    png = out / "replay.png"
    if plot(results, png):
        print(f"\nwrote {png} and {out / 'results.json'}")
    else:
        print(f"wrote {out / 'results.json'}")
    failures = hard_failures(results)
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
