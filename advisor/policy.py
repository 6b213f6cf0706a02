"""A policy is a composition of plugins, written as a spec string:

    BACKFILL[:PRIMARY[:SECONDARY]][:key=value ...]

``easy:SPF:SPF`` is seed 002's EASY-SPF-SPF; ``easy:FCFS:FCFS:T=20h`` adds the queue threshold;
``conservative:FCFS``; ``depth:SPF:FCFS:k=4``; ``none:FCFS`` is strict FCFS. PRIMARY defaults
to FCFS and SECONDARY to PRIMARY. A ``key=value`` goes to the plugin whose parameters have
that key: the backfill plugin first, then the threshold family (``T=`` turns it on).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from advisor.engine import EngineConfig
from advisor.errors import BadInput
from advisor.plugins import family, format_duration, parse_param, plugin


@dataclass(frozen=True)
class Policy:
    spec: str
    backfill: str
    backfill_params: object
    primary: str
    secondary: str
    threshold: str | None = None
    threshold_params: object | None = None

    def engine_config(self, base: EngineConfig = EngineConfig()) -> EngineConfig:
        config = plugin("backfill", self.backfill).configure(base, self.backfill_params)
        config = plugin("ordering", self.primary).configure(config, None, role="primary")
        config = plugin("ordering", self.secondary).configure(config, None, role="secondary")
        if self.threshold:
            config = plugin("threshold", self.threshold).configure(config,
                                                                   self.threshold_params)
        return config

    @property
    def label(self) -> str:
        """Seed 002's naming: EASY-SPF-SPF, plus any non-default parameter."""
        parts = [self.backfill.upper(), self.primary.upper()]
        if self.backfill != "none" and self.backfill != "conservative":
            parts.append(self.secondary.upper())
        label = "-".join(parts)
        extras = [f"{k}={v}" for k, v in _changed(self.backfill_params).items()]
        if self.threshold_params is not None:
            extras += [f"{k}={format_duration(v) if isinstance(v, int) else v}"
                       for k, v in dataclasses.asdict(self.threshold_params).items()]
        return " ".join([label] + extras)


def _changed(params) -> dict:
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
            if getattr(params, f.name) != f.default}


def parse_policy(spec: str) -> Policy:
    """Parse a spec string; raises BadInput naming the part that is wrong."""
    tokens = [t.strip() for t in spec.split(":") if t.strip()]
    if not tokens:
        raise BadInput("empty policy; write e.g. easy:FCFS:FCFS or conservative:FCFS")
    backfill = tokens[0].lower()
    bf_plugin = plugin("backfill", backfill)
    orders = [t for t in tokens[1:] if "=" not in t]
    settings = [t for t in tokens[1:] if "=" in t]
    if len(orders) > 2:
        raise BadInput(f"policy '{spec}' names {len(orders)} orderings; give at most two "
                       "(primary, then backfill)")
    for name in orders:
        plugin("ordering", name)
    primary = orders[0].lower() if orders else "fcfs"
    secondary = orders[1].lower() if len(orders) > 1 else primary

    bf_values, th_values, threshold = {}, {}, None
    bf_fields = {f.name for f in dataclasses.fields(bf_plugin.Params)}
    for setting in settings:
        key, _, value = setting.partition("=")
        key = key.strip()
        if key in bf_fields:
            bf_values[key] = parse_param(bf_plugin.Params, key, value)
            continue
        for name, th_plugin in family("threshold").items():
            if key in {f.name for f in dataclasses.fields(th_plugin.Params)}:
                threshold = name.split("/", 1)[1]
                th_values[key] = parse_param(th_plugin.Params, key, value)
                break
        else:
            raise BadInput(f"policy '{spec}': no '{key}' parameter for backfill/{backfill} "
                           "or any threshold plugin; see 'advisor policies'")
    th_params = plugin("threshold", threshold).Params(**th_values) if threshold else None
    return Policy(spec=spec, backfill=backfill, backfill_params=bf_plugin.Params(**bf_values),
                  primary=primary, secondary=secondary, threshold=threshold,
                  threshold_params=th_params)
