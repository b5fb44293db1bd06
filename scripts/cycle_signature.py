"""Print the cycle signature of fixed configurations: cycles, per-superstep rows, counters, links.

A refactor that claims to leave the hardware cycle-identical runs this before and after and
compares the two outputs (``--compare OLD.json NEW.json``)::

    python scripts/cycle_signature.py --out before.json     # on the old revision
    python scripts/cycle_signature.py --out after.json      # on the new one
    python scripts/cycle_signature.py --compare before.json after.json

Each configuration runs through ``gravfm run --json`` (the CLI is the one interface every revision
keeps), so the figures are those a user reads. Timings and build keys are left out: they change
with the machine and the RTL text, not with the cycles.
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
IGNORED = {"sim", "model", "edge_memory", "memory"}   # wall times, build keys, the prediction's prose;
# the edge-memory keys are absent before off-chip edges existed, and always on chip here
#: Added to every configuration: the edges on chip (the platform's default is off chip since
#: off-chip edges exist; revisions before them reject the option: pass --legacy there).
ON_CHIP = ["--edge-memory", "onchip"]


def signature(args, gravfm):
    """The run's JSON without the fields that do not describe cycles (nor the off-chip memory
    counters, zero on chip and absent before they existed)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run.json"
        done = subprocess.run([gravfm, "run", *args, "--quiet", "--json", str(out)],
                              stdout=subprocess.DEVNULL)
        if not out.exists():
            return {"error": f"gravfm run exited {done.returncode} without JSON"}
        figures = json.loads(out.read_text())
    figures["per_pe"] = [{name: value for name, value in pe.items() if not name.startswith("mem_")}
                         for pe in figures.get("per_pe", [])]
    return {key: value for key, value in figures.items() if key not in IGNORED}


def compare(old_file, new_file):
    old, new = (json.loads(Path(f).read_text()) for f in (old_file, new_file))
    same = True
    for name in CONFIGS:
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
    parser.add_argument("--only", nargs="*", choices=list(CONFIGS), help="run only these")
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two outputs")
    parser.add_argument("--gravfm", default=str(Path(sys.executable).with_name("gravfm")))
    parser.add_argument("--legacy", action="store_true",
                        help="a revision before off-chip edges (no --edge-memory option; always on chip)")
    args = parser.parse_args()
    if args.compare:
        sys.exit(0 if compare(*args.compare) else 1)
    results = {}
    for name in args.only or CONFIGS:
        results[name] = signature(CONFIGS[name] + ([] if args.legacy else ON_CHIP), args.gravfm)
        row = results[name]
        print(f"{name}: cycles {row.get('cycles')} verified {row.get('verified')} "
              f"supersteps {row.get('supersteps')} messages {row.get('messages')}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
