"""How far ``advisor recommend``'s arguments travel: one recommendation from a trace, run
in-process under ``sys.setprofile``, counting over the modules of the advisor

* the modules whose functions are given the parsed options or the ``Settings`` made from
  them (an argument of either type);
* the calls up a layer (a module of a lower layer calling into a higher one: a callback);
* the bounces: calls into a module already on the stack below another module (A -> B -> A);
* the CLI's fan-out: the modules the CLI's own functions call into while the command runs
  (``cmd_recommend``: the options parsed, the work to do).

Layers, low to high: model/errors/units, engine (and a family's kernels and mechanic),
plugins (and a family's plugin, inputs, player), whatif/studies/metrics/cleaning (and a
family's study), views (and a family's view), adapters, the CLI (and a family's command).

    .venv/bin/python bench/recommend_flow.py [--json]

It counts what the run does, not every module the workflow's objects could reach: two
trees are compared by running it in each.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARGS = ["recommend", "--from", "swf:KTH-SP2@150d", "--samples", "2", "--executor", "serial",
        "--no-store", "--json"]


def layer(module: str) -> int | None:
    """The layer of one of the advisor's modules (None: not the advisor's)."""
    parts = module.split(".")
    if parts[0] != "advisor":
        return None
    if len(parts) > 2 and parts[1] == "policies":
        role = parts[-1].split("_")[0] if len(parts) > 3 else "plugin"
        return {"kernel": 1, "mechanic": 1, "inputs": 2, "player": 2, "plugin": 2,
                "study": 3, "view": 4, "command": 6, "bench": 6}.get(role, 2)
    top = parts[1] if len(parts) > 1 else ""
    if top in ("model", "site", "errors", "units"):
        return 0
    if top == "engine":
        return 1
    if top in ("plugins", "settings", "policies"):
        return 2
    if top in ("whatif", "studies", "metrics", "cleaning"):
        return 3
    if top == "views":
        return 4
    if top == "adapters":
        return 5
    return 6                  # cli, cli_args, cli_common, cli_plugins, bench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    from advisor.cli import main as advisor
    from advisor.settings import Settings

    carriers: set[str] = set()
    up, bounces = 0, 0
    pairs: dict[str, int] = {}
    bounced: dict[str, int] = {}
    fan_out: set[str] = set()
    stack: list[str] = []
    working: list[bool] = []      # whether cmd_recommend is on the stack, per frame

    def profile(frame, event, arg):
        nonlocal up, bounces
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            working.append(bool(working and working[-1]) or frame.f_code.co_name ==
                           "cmd_recommend")
            caller = stack[-1] if stack else ""
            here, there = layer(module), layer(caller)
            if here is not None:
                code = frame.f_code
                values = [frame.f_locals.get(n) for n in
                          code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
                if any(isinstance(v, (argparse.Namespace, Settings)) for v in values):
                    carriers.add(module)
                if there is not None and module != caller:
                    if here > there:
                        up += 1
                        pair = f"{caller} -> {module}"
                        pairs[pair] = pairs.get(pair, 0) + 1
                    if module in stack[:-1]:
                        bounces += 1
                        pair = f"{module} -> {caller} -> {module}"
                        bounced[pair] = bounced.get(pair, 0) + 1
                    if caller.startswith("advisor.cli") and not module.startswith(
                            "advisor.cli") and working[-1]:
                        fan_out.add(module)
            stack.append(module)
        elif event == "return" and stack:
            stack.pop()
            working.pop()

    with tempfile.TemporaryDirectory() as home, open(Path(home) / "out", "w") as out:
        sys.setprofile(profile)
        try:
            with contextlib.redirect_stdout(out):     # (the recommendation itself)
                code = advisor(ARGS + ["--lock", str(Path(home) / "lock")])
        finally:
            sys.setprofile(None)
    doc = {"command": "advisor " + " ".join(ARGS), "exit": code,
           "modules_given_the_arguments": len(carriers), "calls_up_a_layer": up,
           "bounces": bounces, "modules": sorted(carriers),
           "cli_fan_out": len(fan_out), "cli_calls_into": sorted(fan_out),
           "calls_up": dict(sorted(pairs.items(), key=lambda kv: -kv[1])),
           "bounced": dict(sorted(bounced.items(), key=lambda kv: -kv[1])[:12])}
    if opts.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"{doc['command']}: exit {code}", file=sys.stderr)
        print(f"modules given the arguments {len(carriers)}, calls up a layer {up}, "
              f"bounces {bounces}, CLI fan-out {len(fan_out)}")
        print("  " + ", ".join(sorted(carriers)))


if __name__ == "__main__":
    main()
