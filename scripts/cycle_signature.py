"""Print the cycle signature of fixed configurations: cycles, per-superstep rows, counters, links.

A refactor that claims to leave the hardware cycle-identical runs this before and after and
compares the two outputs (``--compare OLD.json NEW.json``)::

    python scripts/cycle_signature.py --out before.json     # on the old revision
    python scripts/cycle_signature.py --out after.json      # on the new one
    python scripts/cycle_signature.py --compare before.json after.json

Each configuration runs through ``gravfm run --json`` (the CLI is the one interface every revision
keeps), so the figures are those a user reads. Timings and build keys are left out: they change
with the machine and the RTL text, not with the cycles.

``--set harness`` runs the configurations that exercise the compiled simulator's own parts (memory
models with jitter, banks and reordering, link models that stall, reorder, are slow or one deep,
the per-FPGA schedules and the links idling through the load), on and off chip, and keeps the
memory figures and the load's cycles: a change to the harness alone must leave all of it equal.
Old and new harness side by side, e.g. the old tree exported with ``git archive``::

    PYTHONPATH=/tmp/old python scripts/cycle_signature.py --set harness --out old.json
    python scripts/cycle_signature.py --set harness --out new.json
    python scripts/cycle_signature.py --set harness --compare old.json new.json
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

#: name -> gravfm run arguments. GraVF-M configurations must stay identical; the GraVF ones are
#: printed for the record (its micro-architecture may change).
CONFIGS = {
    "wcc_1x4_rmat11": ["wcc", "--graph", "rmat:scale=11,ef=16,seed=1", "--pes", "4"],
    "bfs_2x4_rmat11": ["bfs", "--graph", "rmat:scale=11,ef=16,seed=1", "--fpgas", "2", "--pes", "4",
                       "--root", "0"],
    "pagerank_1x2_rmat8": ["pagerank", "--graph", "rmat:scale=8,ef=16,seed=1", "--pes", "2"],
    "sssp_2x2_rmat9": ["sssp", "--graph", "rmat:scale=9,ef=16,seed=1", "--fpgas", "2", "--pes", "2",
                       "--root", "0"],
    "wcc_3x2_rmat9": ["wcc", "--graph", "rmat:scale=9,ef=16,seed=1", "--fpgas", "3", "--pes", "2"],
    "gravf_wcc_1x2_rmat9": ["wcc", "--graph", "rmat:scale=9,ef=16,seed=1", "--pes", "2", "--arch", "gravf"],
    "gravf_bfs_2x2_rmat9": ["bfs", "--graph", "rmat:scale=9,ef=16,seed=1", "--fpgas", "2", "--pes", "2",
                            "--arch", "gravf", "--root", "0"],
}
#: --set harness: 5 tops (each built once per harness), several runs on each. Edges stay where the
#: configuration says (no ON_CHIP added).
HARNESS = {
    "offchip_wcc_1x4": ["wcc", "--graph", "rmat:scale=10,ef=16,seed=1", "--pes", "4", "--edge-memory", "offchip"],
    "offchip_wcc_1x4_jitter_banks_reorder": [
        "wcc", "--graph", "rmat:scale=10,ef=16,seed=1", "--pes", "4", "--edge-memory", "offchip",
        "--memory-jitter", "9", "--memory-banks", "3", "--memory-fault", "reorder", "--memory-seed", "5"],
    "offchip_wcc_2x2": ["wcc", "--graph", "rmat:scale=10,ef=16,seed=2", "--fpgas", "2", "--pes", "2",
                        "--edge-memory", "offchip", "--threads", "2"],
    "offchip_wcc_2x2_stall_reorder_jitter": [
        "wcc", "--graph", "rmat:scale=10,ef=16,seed=2", "--fpgas", "2", "--pes", "2", "--edge-memory", "offchip",
        "--threads", "1", "--link-stall", "0.3", "--link-reorder", "4", "--memory-jitter", "20",
        "--memory-banks", "2", "--memory-latency", "40"],
    "onchip_wcc_2x2_depth1_slow": [
        "wcc", "--graph", "rmat:scale=10,ef=16,seed=3", "--fpgas", "2", "--pes", "2", "--edge-memory", "onchip",
        "--threads", "2", "--link-fifo-depth", "1", "--link-bandwidth", "3", "--link-stall", "0.1"],
    "onchip_wcc_2x2_quantum": ["wcc", "--graph", "rmat:scale=10,ef=16,seed=3", "--fpgas", "2", "--pes", "2",
                               "--edge-memory", "onchip", "--threads", "2", "--link-latency", "30"],
    "offchip_wcc_4x1": ["wcc", "--graph", "rmat:scale=9,ef=16,seed=4", "--fpgas", "4", "--pes", "1",
                        "--edge-memory", "offchip", "--threads", "2"],
    "offchip_wcc_4x1_reorder_stall": [
        "wcc", "--graph", "rmat:scale=9,ef=16,seed=4", "--fpgas", "4", "--pes", "1", "--edge-memory", "offchip",
        "--threads", "1", "--link-reorder", "3", "--link-stall", "0.2", "--memory-fault", "reorder"],
    "gravf_offchip_wcc_2x2": ["wcc", "--graph", "rmat:scale=9,ef=16,seed=5", "--fpgas", "2", "--pes", "2",
                              "--arch", "gravf", "--edge-memory", "offchip", "--threads", "2"],
    "gravf_offchip_wcc_2x2_jitter_slow": [
        "wcc", "--graph", "rmat:scale=9,ef=16,seed=5", "--fpgas", "2", "--pes", "2", "--arch", "gravf",
        "--edge-memory", "offchip", "--threads", "1", "--memory-jitter", "7", "--memory-bandwidth", "2",
        "--link-bandwidth", "5"],
}
SETS = {"default": CONFIGS, "harness": HARNESS}
IGNORED = {"sim", "model", "edge_memory", "memory", "provenance"}   # wall times, build keys, the prediction's
# prose, the run's command line (a temporary file, the cache), machine and time; the edge-memory keys are
# absent before off-chip edges existed, and always on chip here
MEMORY_KEYS = {"edge_memory", "memory"}   # kept by --set harness
NEVER_KEPT = IGNORED - MEMORY_KEYS         # in no signature, nor compared (older outputs kept provenance)
#: Added to every configuration: the edges on chip (the platform's default is off chip since
#: off-chip edges exist; revisions before them reject the option: pass --legacy there).
ON_CHIP = ["--edge-memory", "onchip"]


def signature(args, gravfm, *, memory=False, cache=None):
    """The run's JSON without the fields that do not describe cycles (nor, unless ``memory``, the
    off-chip memory figures, zero on chip and absent before they existed; with it, the load's
    cycles too)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run.json"
        done = subprocess.run([gravfm, "run", *args, "--quiet", "--json", str(out),
                               *(["--cache", cache] if cache else [])], stdout=subprocess.DEVNULL)
        if not out.exists():
            return {"error": f"gravfm run exited {done.returncode} without JSON"}
        figures = json.loads(out.read_text())
    if memory:
        kept = {key: value for key, value in figures.items() if key not in NEVER_KEPT}
        return {**kept, "load_cycles": figures["sim"]["load_cycles"]}
    figures["per_pe"] = [{name: value for name, value in pe.items() if not name.startswith("mem_")}
                         for pe in figures.get("per_pe", [])]
    return {key: value for key, value in figures.items() if key not in IGNORED}


def compare(old_file, new_file, configs=CONFIGS):
    old, new = ({name: {key: value for key, value in row.items() if key not in NEVER_KEPT}
                 for name, row in json.loads(Path(f).read_text()).items()} for f in (old_file, new_file))
    same = True
    for name in configs:
        a, b = old.get(name), new.get(name)
        if a is None and b is None:   # run in neither (--only)
            continue
        if a == b:
            print(f"{name}: identical (cycles {a['cycles']}, verified {a['verified']})")
            continue
        same = False
        keys = sorted(k for k in set(a or {}) | set(b or {}) if (a or {}).get(k) != (b or {}).get(k))
        print(f"{name}: DIFFERENT in {', '.join(keys)}")
        for key in ("cycles", "verified", "messages", "supersteps"):
            print(f"    {key}: {(a or {}).get(key)} -> {(b or {}).get(key)}")
    return same


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the signatures here (JSON)")
    parser.add_argument("--set", choices=list(SETS), default="default", help="which configurations (default: "
                        "the hardware's; harness: the compiled simulator's parts, with memory figures)")
    parser.add_argument("--only", nargs="*", choices=[*CONFIGS, *HARNESS], help="run only these")
    parser.add_argument("--cache", help="build cache (default: gravfm's)")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two outputs")
    parser.add_argument("--gravfm", default=str(Path(sys.executable).with_name("gravfm")))
    parser.add_argument("--legacy", action="store_true",
                        help="a revision before off-chip edges (no --edge-memory option; always on chip)")
    args = parser.parse_args()
    configs, harness = SETS[args.set], args.set == "harness"
    if args.compare:
        sys.exit(0 if compare(*args.compare, configs) else 1)
    results = {}
    for name in args.only or configs:
        extra = [] if args.legacy or harness else ON_CHIP
        results[name] = signature(configs[name] + extra, args.gravfm, memory=harness, cache=args.cache)
        row = results[name]
        print(f"{name}: cycles {row.get('cycles')} verified {row.get('verified')} "
              f"supersteps {row.get('supersteps')} messages {row.get('messages')}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
