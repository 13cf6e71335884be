"""The benchmark table: workloads W1-W6 (benchmarks/workloads.py) on funcgrad, funcgrad.jit,
funcgrad.mutable and whichever peers are installed (PyTorch, HIPS autograd, JAX eager and
jit), beside hand-written NumPy, with the issue-12 targets marked met or missed.

Run:  python benchmarks/run.py            (a few minutes; writes benchmarks/results.md)
      python benchmarks/run.py --quick    (smaller sizes, fewer rounds: under a minute)
      python benchmarks/run.py --only W1,W6 --out /tmp/table.md

How it measures:
* one thread everywhere (BLAS, OpenMP, XLA, torch), set before NumPy is imported;
* every system's value and gradients are checked against a float64 reference first; a
  system that fails or disagrees gets that in its cell and is not timed;
* the systems take turns round by round, and a ratio is the median over rounds of the
  same-round ratio, so load from other processes falls on all systems alike;
* each workload is timed in a fresh process of its own, so no workload runs in the heap an
  earlier one left behind (W2's hand-written step page-faults or not depending on that
  history: glibc's dynamic mmap threshold);
* peak memory is the rise of the resident set during one call, sampled by a thread, each
  system in a fresh process (it sees NumPy, PyTorch and XLA buffers alike); for NumPy-based
  systems tracemalloc's peak is given too.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's funcgrad, not an installed one

import numpy as np  # noqa: E402

import workloads as W  # noqa: E402

MEMORY_WORKLOADS = ("W4", "W6")
QUICK_MEMORY_SYSTEMS = (W.NUMPY, W.FG, W.FG_JIT)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- time --------------------------------------------------------------------------------
def _calibrate(step, budget: float) -> int:
    """How many calls make one timed turn of about `budget` seconds (at least one)."""
    start = time.perf_counter()
    step()
    once = time.perf_counter() - start
    return max(1, min(200, int(budget / max(once, 1e-7))))


def interleaved(steps: dict, rounds: int, budget: float) -> dict:
    """Seconds per call for each named step, per round; the steps take turns each round."""
    numbers = {name: _calibrate(step, budget) for name, step in steps.items()}
    times = {name: [] for name in steps}
    for r in range(rounds):
        for name, step in steps.items():
            n = numbers[name]
            gc.collect()
            start = time.perf_counter()
            for _ in range(n):
                step()
            times[name].append((time.perf_counter() - start) / n)
        log(f"    round {r + 1}/{rounds}")
    return times


def median_ratio(own: list, base: list) -> float:
    return float(np.median(np.divide(own, base)))


# --- memory ------------------------------------------------------------------------------
def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_rise(fn) -> int:
    """The largest rise of the resident set above its level before `fn()`, sampled."""
    gc.collect()
    base = _rss()
    peak = [base]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.0003)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        fn()
        peak[0] = max(peak[0], _rss())
    finally:
        done.set()
        sampler.join()
    return peak[0] - base


def peak_traced(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def probe_memory(key: str, system: str, quick: bool) -> dict:
    """Run in a fresh process: the peak memory of one call of `system` on workload `key`."""
    workload = W.BY_KEY[key]
    ctx = workload.setup(quick)
    step = workload.systems[system](ctx)
    if key != "W4":
        step()  # compile (jit) and warm up; big buffers go back to the OS when freed
    result = {"rss": peak_rss_rise(step)}
    if system in (W.NUMPY, W.FG, W.FG_JIT, W.FM, W.AUTOGRAD):
        result["traced"] = peak_traced(step)
    result["steps"] = getattr(step, "ctx", ctx).get("steps")
    return result


def memory_in_subprocess(key: str, system: str, quick: bool) -> dict | str:
    cmd = [sys.executable, os.path.abspath(__file__), "--probe-memory", key, system]
    if quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        return "fails: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- one workload ------------------------------------------------------------------------
def run_workload(workload, systems: list, quick: bool) -> dict:
    """{system: {"status": ..., "times": [...], "memory": ..., "ctx": ...}}."""
    log(f"{workload.key}: {workload.title}")
    ctx = workload.setup(quick)
    reference = workload.reference(ctx)
    cells: dict = {}
    steps = {}
    for name in systems:
        make = workload.systems.get(name)
        if make is None:
            continue
        log(f"  {name}: building and checking")
        try:
            step = make(ctx)
        except ImportError as err:
            cells[name] = {"status": f"not installed ({err.name or err})"}
            continue
        except Exception as err:  # noqa: BLE001 - a system's failure is a table cell
            cells[name] = {"status": f"fails: {type(err).__name__}: {str(err)[:100]}"}
            continue
        own_ctx = getattr(step, "ctx", ctx)
        expected = reference if own_ctx is ctx else workload.reference(own_ctx)
        try:
            problem = W.check(workload, step(), expected)
        except Exception as err:  # noqa: BLE001
            problem = f"fails: {type(err).__name__}: {str(err).splitlines()[0][:100]}"
        if problem is not None:
            cells[name] = {"status": problem if problem.startswith("fails") else "WRONG: " + problem}
            continue
        # what the table reads of a system's context: its op and step counts
        cells[name] = {"status": "ok",
                       "ctx": {k: own_ctx[k] for k in ("n_ops", "steps") if k in own_ctx}}
        steps[name] = step
    rounds = (2 if quick else 3) if workload.key in ("W3", "W4") else (5 if quick else 15)
    budget = 0.01 if quick else 0.05
    log(f"  timing {len(steps)} systems, {rounds} rounds")
    for name, t in interleaved(steps, rounds, budget).items():
        cells[name]["times"] = t
    steps.clear()
    gc.collect()
    if workload.key in MEMORY_WORKLOADS:
        for name, cell in cells.items():
            if cell["status"] != "ok" or (quick and name not in QUICK_MEMORY_SYSTEMS):
                continue
            log(f"  {name}: peak memory (fresh process)")
            cell["memory"] = memory_in_subprocess(workload.key, name, quick)
    return cells


def workload_in_subprocess(key: str, systems: list, quick: bool) -> dict:
    """`run_workload` in a fresh process (its progress lines pass through to stderr)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--run-workload", key,
           "--systems", ",".join(systems)] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=1800)
    if proc.returncode != 0:
        return {name: {"status": f"fails: the {key} process exited with {proc.returncode}"}
                for name in systems}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- the table ---------------------------------------------------------------------------
def _fmt_ratio(r: float) -> str:
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.3f}x"


def _fmt_bytes(b: float) -> str:
    return f"{b / 2**20:.0f} MiB" if b >= 2**20 else f"{b / 1024:.0f} KiB"


def cell_text(key: str, name: str, cells: dict) -> str:
    cell = cells.get(name)
    if cell is None:
        return "—"
    if cell["status"] != "ok":
        return cell["status"]
    times = cell["times"]
    t = float(np.median(times))
    base = cells.get(W.NUMPY, {}).get("times")
    if key == "W1":
        text = f"{t / cell['ctx']['n_ops'] * 1e6:.2f} us/op"
        return text if base is None else f"{_fmt_ratio(median_ratio(times, base))} ({text})"
    if key == "W4":
        steps = cell["ctx"]["steps"]
        text = f"{t / steps * 1e6:.1f} us/step"
        mem = cell.get("memory")
        if isinstance(mem, dict):
            n_ops = 4 * mem["steps"]
            text += f", {mem['rss'] / n_ops:.0f} B/op"
            if "traced" in mem:
                text += f" ({mem['traced'] / n_ops:.0f} B/op traced)"
        elif isinstance(mem, str):
            text += f", memory {mem}"
        return text
    if key == "W5":
        text = f"{t * 1e3:.3f} ms"
        torch_times = cells.get(W.TORCH, {}).get("times")
        if torch_times is not None:
            text += f" ({_fmt_ratio(median_ratio(times, torch_times))} PyTorch)"
        return text
    text = f"{t * 1e3:.1f} ms" if base is None else f"{_fmt_ratio(median_ratio(times, base))}"
    if key == "W6":
        mem = cell.get("memory")
        base_mem = cells.get(W.NUMPY, {}).get("memory")
        if isinstance(mem, dict) and isinstance(base_mem, dict):
            text += f" time, {mem['rss'] / base_mem['rss']:.2f}x memory"
            text += f" ({_fmt_bytes(mem['rss'])})"
        elif isinstance(mem, str):
            text += f", memory {mem}"
    return text


TARGETS = [
    # (label, workload, system, what, limit): `what` reads a figure off the cells
    ("jit W1 <= 1.0x NumPy", "W1", W.FG_JIT, "ratio", 1.0),
    ("jit W2 (whole SGD step) <= 1.0x NumPy", "W2", W.FG_JIT, "ratio", 1.0),
    ("jit W6 time <= 1.0x NumPy", "W6", W.FG_JIT, "ratio", 1.0),
    ("jit W6 peak memory <= 1.0x NumPy", "W6", W.FG_JIT, "memory", 1.0),
    ("jit W5 <= 0.02x PyTorch's time", "W5", W.FG_JIT, "torch", 0.02),
    ("eager W1 <= 2.5x NumPy", "W1", W.FG, "ratio", 2.5),
    ("eager W2 <= 1.15x NumPy", "W2", W.FG, "ratio", 1.15),
    ("eager W2 ahead of PyTorch", "W2", W.FG, "torch", 1.0),
    ("eager W6 time <= 1.05x NumPy", "W6", W.FG, "ratio", 1.05),
    ("eager W6 peak memory <= 1.5x NumPy", "W6", W.FG, "memory", 1.5),
    ("eager W4 <= 8 us/step", "W4", W.FG, "us_step", 8.0),
    ("eager W4 <= 150 B/op", "W4", W.FG, "bytes_op", 150.0),
]


def target_figure(results: dict, key: str, system: str, what: str) -> float | None:
    cells = results.get(key, {})
    cell = cells.get(system, {})
    if cell.get("status") != "ok":
        return None
    times = cell["times"]
    if what == "ratio":
        base = cells.get(W.NUMPY, {}).get("times")
        return None if base is None else median_ratio(times, base)
    if what == "torch":
        base = cells.get(W.TORCH, {}).get("times")
        return None if base is None else median_ratio(times, base)
    if what == "memory":
        mem, base = cell.get("memory"), cells.get(W.NUMPY, {}).get("memory")
        if isinstance(mem, dict) and isinstance(base, dict):
            return mem["rss"] / base["rss"]
        return None
    if what == "us_step":
        return float(np.median(times)) / cell["ctx"]["steps"] * 1e6
    if what == "bytes_op":
        mem = cell.get("memory")
        if not isinstance(mem, dict):
            return None
        return mem.get("traced", mem["rss"]) / (4 * mem["steps"])
    raise ValueError(what)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def header_lines(quick: bool, load_before: tuple) -> list[str]:
    peers = [f"{label} {v}" for label, dist in (("PyTorch", "torch"), ("HIPS autograd", "autograd"),
                                                ("JAX", "jax"), ("jaxlib", "jaxlib"))
             if (v := _version(dist)) is not None]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_after = os.getloadavg()
    return [
        f"- date: {now}{' (--quick: smaller sizes, fewer rounds)' if quick else ''}",
        f"- machine: {_cpu_name()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; one thread for BLAS, XLA and torch",
        f"- load average (1 min) before / after the run: {load_before[0]:.1f} / "
        f"{load_after[0]:.1f}",
        f"- Python {platform.python_version()}, NumPy {np.__version__}; " + ", ".join(peers),
    ]


def render(results: dict, systems: list, quick: bool, load_before: tuple) -> str:
    shown = [s for s in systems if any(s in cells for cells in results.values())]
    lines = ["# Benchmarks", "", *header_lines(quick, load_before), "",
             "Ratios are to hand-written NumPy forward+backward in the same run (medians of "
             "same-round ratios), except W4 (per step, and peak memory per recorded op) and "
             "W5 (milliseconds, and the ratio to PyTorch's time). Memory is the peak rise of "
             "the resident set during one call, in a fresh process.", "",
             "| workload | " + " | ".join(shown) + " |",
             "|---|" + "---|" * len(shown)]
    for workload in W.WORKLOADS:
        if workload.key not in results:
            continue
        cells = results[workload.key]
        row = [f"{workload.key} {workload.title}"] + [cell_text(workload.key, s, cells) for s in shown]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Targets (issue 12)", "", "| target | figure | met |", "|---|---|---|"]
    for label, key, system, what, limit in TARGETS:
        if key not in results:
            continue
        fig = target_figure(results, key, system, what)
        if fig is None:
            lines.append(f"| {label} | not measured ({results[key].get(system, {}).get('status', 'not run')}) | no |")
            continue
        unit = {"us_step": " us/step", "bytes_op": " B/op"}.get(what, "x")
        shown = f"{fig:.2f}" if unit == "x" and fig >= 0.1 else f"{fig:.3g}"
        met = float(shown) <= limit  # the figure as printed decides
        lines.append(f"| {label} | {shown}{unit} | {'yes' if met else 'NO'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
    parser.add_argument("--only", default="", help="comma-separated workloads, e.g. W1,W6")
    parser.add_argument("--systems", default="", help="comma-separated system names")
    parser.add_argument("--out", default=None,
                        help="markdown file to write (default benchmarks/results.md, "
                             "or benchmarks/results-quick.md with --quick)")
    parser.add_argument("--probe-memory", nargs=2, metavar=("WORKLOAD", "SYSTEM"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--run-workload", metavar="WORKLOAD", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_memory:
        print(json.dumps(probe_memory(*args.probe_memory, args.quick)))
        return
    systems = [s.strip() for s in args.systems.split(",") if s.strip()] or W.SYSTEMS
    if args.run_workload:
        print(json.dumps(run_workload(W.BY_KEY[args.run_workload], systems, args.quick)))
        return
    load_before = os.getloadavg()
    keys = [k.strip() for k in args.only.split(",") if k.strip()] or list(W.BY_KEY)
    if W.NUMPY not in systems:
        systems.insert(0, W.NUMPY)
    if W.TORCH not in systems:
        systems.append(W.TORCH)  # W5's ratios and the W2 target need it
    started = time.perf_counter()
    results = {key: workload_in_subprocess(key, systems, args.quick) for key in keys}
    table = render(results, systems, args.quick, load_before)
    out = args.out or os.path.join(HERE, "results-quick.md" if args.quick else "results.md")
    with open(out, "w") as f:
        f.write(table)
    print(table)
    log(f"done in {time.perf_counter() - started:.0f} s; written to {out}")


if __name__ == "__main__":
    main()
