"""How far ``advisor recommend``'s arguments travel through the code: the walk of the
command line's options (the argparse namespace), the source opened, and what
``whatif.recommend.recommend`` is given (the snapshot, the history, the ``Settings``, the
executor), from the CLI to where they are used, on one serial run over a trace.

Every call of a function of the advisor (or of a family) that is given one of those
objects (by type: the namespace, a source, a ``Snapshot``, ``Settings``, an executor; the
history by identity) is a step. The walk's
figures: its *rooms*, the modules given them; its *climbs*, steps into a module of a
higher layer than the caller's (the engine and the model lowest, then the plugin seam
and the settings, the what-if layer, the studies, the views and the adapters, the
sources, the CLI highest); its *bounces*, steps into a module the arguments already
passed through further up the stack (a module that hands them on and gets them back).

    .venv/bin/python bench/argument_walk.py [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ARGV = ["recommend", "--from", "swf:KTH-SP2@150d", "--no-store", "--executor", "serial",
        "--samples", "2", "--json"]
#: a module's layer, by the first prefix that matches (highest first)
LAYERS = (("advisor.cli", 7), ("advisor.sources", 6), ("advisor.adapters", 5),
          ("advisor.views", 5), ("advisor.studies", 4), ("advisor.whatif", 3),
          ("advisor.policies", 2), ("advisor.plugins", 2), ("advisor.settings", 2),
          ("advisor", 1))


def layer(module: str) -> int:
    """(``advisor.cli`` takes in cli_args, cli_plugins...)"""
    return next(n for prefix, n in LAYERS if module == prefix or module.startswith(
        prefix + ("" if prefix == "advisor.cli" else ".")))


def walk(argv: list[str]) -> dict:
    from advisor import cli
    from advisor.model import Snapshot
    from advisor.settings import Settings
    from advisor.whatif.advise import TraceMoment
    from advisor.whatif.runner import Closing
    tracked = (argparse.Namespace, Settings, TraceMoment, Snapshot, Closing)
    history_ids: set[int] = set()
    try:
        from advisor.adapters.sources import LiveCluster
        tracked += (LiveCluster,)
    except ImportError:
        pass
    steps: list[tuple[str, str, bool]] = []

    def ours(frame) -> str | None:
        name = frame.f_globals.get("__name__", "")
        return name if name.startswith("advisor") else None

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = ours(frame)
        if callee is None:
            return
        code = frame.f_code
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        values = [frame.f_locals.get(p) for p in params]
        if callee == "advisor.whatif.recommend" and code.co_name == "recommend":
            history_ids.add(id(frame.f_locals.get("history")))
        if not any(isinstance(v, tracked) or id(v) in history_ids for v in values):
            return
        stack, up = [], frame.f_back
        while up is not None:
            m = ours(up)
            if m is not None and (not stack or stack[-1] != m):
                stack.append(m)
            up = up.f_back
        caller = stack[0] if stack else "<main>"
        if caller == callee:
            return                   # within a module: not a step
        steps.append((caller, callee, callee in stack[1:]))

    sys.setprofile(profile)
    try:
        code = cli.main(argv)
    finally:
        sys.setprofile(None)
    rooms = Counter(callee for _, callee, _ in steps)
    climbs = [(a, b) for a, b, _ in steps if a != "<main>" and layer(b) > layer(a)]
    bounces = [(a, b) for a, b, back in steps if back]
    return {"argv": argv, "exit": code, "steps": len(steps), "rooms": len(rooms),
            "climbs": len(climbs), "bounces": len(bounces),
            "modules": dict(sorted(rooms.items())),
            "climbs_by_pair": dict(Counter(f"{a} -> {b}" for a, b in climbs)),
            "bounces_by_pair": dict(Counter(f"{a} -> {b}" for a, b in bounces))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        figures = walk(ARGV)
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f"advisor {' '.join(ARGV)} (exit {figures['exit']}): {figures['steps']} steps, "
          f"{figures['rooms']} rooms, {figures['climbs']} climbs, "
          f"{figures['bounces']} bounces")
    for pair, n in sorted(figures["climbs_by_pair"].items()):
        print(f"  climb  {n:3d}  {pair}")
    for pair, n in sorted(figures["bounces_by_pair"].items()):
        print(f"  bounce {n:3d}  {pair}")


if __name__ == "__main__":
    main()
