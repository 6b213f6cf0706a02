"""The policy seam: the contract the registry checks, specs in both forms, enactments that
compose or conflict, and the engine's hook for an ordering it does not know by name."""
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine import EngineConfig, SortKey, job_arrays, queue_rank, run
from advisor.errors import BadInput
from advisor.model import SchedulingConfig
from advisor.plugins import Enactment, NoParams, NoSlurmForm, PluginBase, param
from advisor.plugins.contract import Context
from advisor.plugins.enactment import Conflict, compose
from advisor.plugins.grid import ANY_CLUSTER, default_grid
from advisor.plugins.registry import PluginRefused, build, check, registry
from advisor.plugins.spec import Choice, Policy, parse_policy


class Toy(PluginBase):
    family, name, summary, Params = "toy", "one", "a toy", NoParams

    def candidates(self, context):
        return (NoParams(),)

    def configure(self, config, params):
        return config

    def enact(self, params, context):
        return Enactment()


def _without(member: str) -> object:
    body = {k: v for k, v in vars(Toy).items() if not k.startswith("__") and k != member}
    return type("Broken", (PluginBase,), body)()


@pytest.mark.parametrize("member", ["enact", "candidates", "configure", "summary", "Params"])
def test_an_incomplete_plugin_is_refused_naming_what_it_lacks(member):
    assert check(Toy(), "toy/one", "toy-pkg 1.0").key == "toy/one"
    with pytest.raises(PluginRefused, match=f"'toy/one' from toy-pkg 1.0 is refused: it has "
                                            f"no '{member}'.*uninstall toy-pkg 1.0"):
        check(_without(member), "toy/one", "toy-pkg 1.0")


@dataclass
class Loose:
    k: int = 1


@dataclass(frozen=True)
class NoDefault:
    k: int


@dataclass(frozen=True)
class BelowMin:
    k: int = param(0, "depth", min=1)


@dataclass(frozen=True)
class Unknown:
    k: int = param(1, "depth", step=2)


@dataclass(frozen=True)
class NotAChoice:
    how: str = param("some", "rule", choices=("all", "first"))


@pytest.mark.parametrize("Params, problem", [
    (dict, "Params is not a dataclass"), (Loose, "not frozen"), (NoDefault, "Params.k has no "
     "default"), (BelowMin, "default is below its min 1"), (Unknown, "says step"),
    (NotAChoice, "is not one of its choices")])
def test_a_malformed_params_is_refused(Params, problem):
    toy = Toy()
    toy.Params = Params
    with pytest.raises(PluginRefused, match=problem):
        check(toy, "toy/one", "toy-pkg 1.0")


def test_a_plugin_must_be_registered_under_its_own_name_and_a_family_has_one_default():
    with pytest.raises(PluginRefused, match="registered as 'toy/two' but calls itself 'toy/one'"):
        check(Toy(), "toy/two", "toy-pkg 1.0")
    first, second = Toy(), Toy()
    first.default = second.default = True
    second.name = "two"
    with pytest.raises(PluginRefused, match="both claim to be the default toy"):
        build([check(first, "toy/one", "a 1"), check(second, "toy/two", "b 2")])


def test_replaces_and_aliases_are_checked_when_a_plugin_loads():
    """A family a plugin replaces must exist and not be its own; an alias must be a
    lower-case name no plugin has, whose parameters Params accepts, and only one plugin's."""
    @dataclass(frozen=True)
    class Cost:
        cost: str = param("a", "what", choices=("a", "b"))

    def toy(name="one", **members):
        t = Toy()
        t.name, t.Params = name, Cost
        for k, v in members.items():
            setattr(t, k, v)
        return t

    assert check(toy(replaces=("ordering",)), "toy/one", "p 1").replaces == ("ordering",)
    with pytest.raises(PluginRefused, match="it replaces its own family"):
        check(toy(replaces=("toy",)), "toy/one", "p 1")
    with pytest.raises(PluginRefused, match="replaces is not a list of family names"):
        check(toy(replaces="ordering"), "toy/one", "p 1")
    with pytest.raises(PluginRefused, match="replaces the family 'nope'"):
        build([check(toy(replaces=("nope",)), "toy/one", "p 1")])
    with pytest.raises(PluginRefused, match="alias 'x' gives parameters Params refuses"):
        check(toy(aliases={"x": {"cost": "c", "other": 1}}), "toy/one", "p 1")
    with pytest.raises(PluginRefused, match="aliases must map lower-case names"):
        check(toy(aliases={"X Y": {}}), "toy/one", "p 1")
    with pytest.raises(PluginRefused, match="both call a choice 'x'"):
        build([check(toy(aliases={"x": {}}), "toy/one", "p 1"),
               check(toy("two", aliases={"x": {}}), "toy/two", "p 1")])
    with pytest.raises(PluginRefused, match="calls a choice 'two', the name of a plugin"):
        build([check(toy(aliases={"two": {}}), "toy/one", "p 1"),
               check(toy("two"), "toy/two", "p 1")])


def test_the_short_form_is_what_the_plugins_declare():
    """A family's place in ``easy:SPF`` is what its members say; one that says nothing (a
    site's own ordering) takes its family's; two places for one family, one place for two
    families, or a gap are refused when the registry is built."""
    def member(family, name, slot=None, extra=""):
        t = Toy()
        t.family, t.name, t.short_slot, t.short_extra = family, name, slot, extra
        return check(t, f"{family}/{name}", "p 1")

    head, order, site = member("bf", "a", 0), member("ord", "x", 1), member("ord", "y")
    assert build([head, order, site]).short_families == ("bf", "ord")
    assert build([member("bf", "a")]).short_families == ()
    with pytest.raises(PluginRefused, match="give their family different places"):
        build([head, order, member("ord", "z", 2)])
    with pytest.raises(PluginRefused, match="both take place 1"):
        build([head, order, member("other", "q", 1)])
    with pytest.raises(PluginRefused, match="leave a gap"):
        build([head, member("ord", "x", 2)])
    with pytest.raises(PluginRefused, match="short_extra 'order' is not one of its"):
        member("bf", "b", 0, "order")


def test_a_plan_stands_alone_under_its_alias():
    """plan/sa replaces the ordering and backfill families: a policy holding it has neither,
    may not name one, is labelled and written by its alias, and sits in the grid alone."""
    plan = parse_policy("PLAN2")
    assert [c.plugin.key for c in plan.choices] == ["plan/sa"]
    assert plan.label == "PLAN2" and plan.canonical == "plan2"
    assert parse_policy("plan/sa:cost=wait:N=20").canonical == "plan1:N=20"
    assert parse_policy(parse_policy("plan1:N=20").canonical) == parse_policy("plan1:N=20")
    assert plan.engine_config().mechanic.cost == "squared"
    # its threshold T is its own (the short form's T= is the threshold family's)
    bounded = parse_policy("plan1:T=1d")
    assert bounded.canonical == "plan1:T=1d" and bounded.label == "PLAN1 T=1d"
    assert bounded.engine_config().threshold == 86400 and plan.engine_config().threshold is None
    assert parse_policy("easy:SPF:T=1d").choice("threshold").plugin.key == "threshold/queue"
    for spec in ("easy:FCFS + plan2", "plan2 + ordering/spf"):
        with pytest.raises(BadInput, match="replaces the (backfill|ordering) family"):
            parse_policy(spec)
    grid = default_grid(Context(ANY_CLUSTER))
    plans = [p for p in grid if p.choice("plan")]
    assert [p.spec for p in plans] == ["plan1:T=1d", "plan2:T=1d", "plan3:T=1d"]
    assert all(len(p.choices) == 1 for p in plans)


@pytest.mark.parametrize("spec, message", [
    ("easy:FOO", "unknown ordering policy 'FOO'; installed: fcfs, lcfs"),
    ("ordering/nope", "unknown ordering policy 'nope'"),
    ("nofamily/x", "no policy family 'nofamily' is installed"),
    ("backfill/depth:z=1", "backfill/depth has no 'z' parameter"),
    ("backfill/depth:SPF", "'SPF' in 'backfill/depth:SPF' is not key=value"),
    ("easy:SPF + depth:k=2", "only its first part may be the short form"),
    ("easy:SPF + backfill/depth", "names two backfill choices: easy and depth"),
    ("conservative:SPF:FCFS", "backfill/conservative takes no word after its ordering"),
    ("easy:FCFS:order=nope", "unknown ordering policy 'nope'"),
    ("easy:SPF + ", "empty policy"),
])
def test_unknown_or_malformed_specs_are_refused_never_mapped(spec, message):
    with pytest.raises(BadInput, match=message):
        parse_policy(spec)


def test_the_general_form_names_the_same_policy_as_the_short_one():
    short = parse_policy("depth:SPF:LQF:k=4:T=20h")
    general = parse_policy("ordering/spf + backfill/depth:k=4:order=lqf + "
                           "threshold/queue:T=20h")
    assert general == short and general.spec != short.spec
    assert general.label == "DEPTH-SPF-LQF k=4 T=20h" == short.label
    assert general.engine_config() == EngineConfig(backfill="depth", depth=4, primary="SPF",
                                                   secondary="LQF", threshold=72000)
    # a family not named gets its default member; an optional one is absent
    assert parse_policy("ordering/sqf") == parse_policy("easy:SQF")
    assert parse_policy("ordering/sqf").choice("threshold") is None
    # a backfill order equal to the primary one is no order of its own
    assert parse_policy("easy:SPF:SPF") == parse_policy("easy:SPF")


_BACKFILLS = st.one_of(
    st.tuples(st.just("easy"), st.fixed_dictionaries({"shadow": st.sampled_from(["all",
                                                                                  "first"])})),
    st.tuples(st.just("depth"), st.fixed_dictionaries({"k": st.integers(1, 50)})),
    st.tuples(st.sampled_from(["conservative", "none"]), st.just({})))
_ORDERS = st.sampled_from(["fcfs", "lcfs", "spf", "lpf", "sqf", "lqf", "exp"])


@settings(max_examples=150, deadline=None)
@given(_BACKFILLS, _ORDERS, _ORDERS, st.one_of(st.none(), st.integers(60, 40 * 86400)),
       st.integers(0, 8))
def test_a_policy_built_from_choices_parses_back_from_its_spec(backfill, primary, second, t,
                                                               scale):
    reg = registry()
    bf, values = backfill
    bf_plugin = reg.plugin("backfill", bf)
    if "order" in {f for f in bf_plugin.Params.__dataclass_fields__}:
        values = {**values, "order": second}
    order = reg.plugin("ordering", primary)
    # (an ordering added to a site's policy has a scale)
    params = order.Params() if order.Params is NoParams else order.Params(scale=scale)
    choices = [Choice(bf_plugin, bf_plugin.Params(**values)), Choice(order, params)]
    if t is not None:
        queue = reg.plugin("threshold", "queue")
        choices.append(Choice(queue, queue.Params(T=t)))
    policy = Policy.of(choices)
    again = parse_policy(policy.spec)
    assert again == policy and again.label == policy.label
    assert again.engine_config() == policy.engine_config()


class Claims(Toy):
    """A toy family whose enactment is given."""

    def __init__(self, name, enactment):
        self.name, self._e = name, enactment

    def enact(self, params, context):
        return self._e


def test_what_a_family_sets_beats_what_another_clears_and_two_settings_conflict():
    zero = Enactment(clears={"priority_weight_age": 0, "priority_weight_qos": 0},
                     sets={"priority_type": "priority/multifactor"}, caveats=("a",))
    age = Enactment(sets={"priority_weight_age": 500, "backfill.bf_window": 2880},
                    fidelity="approximate", caveats=("b",))
    both = compose([("x/zero", zero), ("y/age", age)])
    config = both.apply(SchedulingConfig(priority_weight_qos=7))
    assert config.priority_weight_age == 500 and config.priority_weight_qos == 0
    assert config.backfill.bf_window == 2880
    assert both.fidelity == "approximate" and both.caveats == ("a", "b")
    assert both.by == ("x/zero", "y/age")
    other = Enactment(sets={"priority_weight_age": 9})
    with pytest.raises(Conflict, match="y/age and z/other both set priority_weight_age "
                                       r"\(500 and 9\)"):
        compose([("x/zero", zero), ("y/age", age), ("z/other", other)])
    with pytest.raises(BadInput, match="z/bad sets 'priority_weight_color'"):
        compose([("z/bad", Enactment(sets={"priority_weight_color": 1}))])
    spf, lpf = (parse_policy(s).choice("ordering").plugin for s in ("easy:SPF", "easy:LPF"))
    e1 = spf.enact(NoParams(), Context(ANY_CLUSTER))
    e2 = lpf.enact(NoParams(), Context(ANY_CLUSTER))
    with pytest.raises(Conflict, match="a/one and b/two both give the jobs a site factor"):
        compose([("a/one", e1), ("b/two", replace(e2, sets={}, clears={}))])


def test_a_policy_slurm_cannot_express_is_refused_with_its_label_and_left_out_of_the_grid():
    context = Context(ANY_CLUSTER)
    with pytest.raises(NoSlurmForm, match="EASY-EXP-EXP: Slurm has no form of EXP"):
        parse_policy("easy:EXP").enact(context)
    with pytest.raises(NoSlurmForm, match="EASY-SPF-FCFS: Slurm backfills in its one priority"):
        parse_policy("easy:SPF:FCFS").enact(context)
    grid = [p for p in default_grid(context) if p.choice("ordering")]   # plans have none
    assert not [p for p in grid if p.choice("ordering").plugin.name in ("exp", "lcfs")]
    # only policies that bound waiting: FCFS alone, any other ordering with a threshold
    assert all(p.choice("ordering").plugin.name == "fcfs" or p.choice("threshold")
               for p in grid)


# ---- the engine's hook: an ordering given as a per-job key

def neg_procs(arrays):
    return -arrays.procs.astype(float)


def estimate(arrays):
    return arrays.estimate.astype(float)


def test_an_ordering_given_as_a_key_runs_as_the_same_builtin_one(trace):
    arrays = job_arrays(trace("KTH-SP2"))
    lqf, spf = SortKey("lqf-by-key", neg_procs), SortKey("spf-by-key", estimate)
    for builtin, keyed in [
            (EngineConfig(primary="LQF"), EngineConfig(primary=lqf)),
            (EngineConfig(primary="SPF", secondary="LQF"),
             EngineConfig(primary="SPF", secondary=lqf)),
            (EngineConfig(primary="SPF", secondary="LQF"),            # two keys, told apart
             EngineConfig(primary=spf, secondary=lqf)),
            (EngineConfig(backfill="conservative", primary="LQF", threshold=7200),
             EngineConfig(backfill="conservative", primary=lqf, threshold=7200))]:
        assert np.array_equal(run(arrays, builtin)[0], run(arrays, keyed)[0])
    queued = np.arange(0, len(arrays), 7)
    assert np.array_equal(queue_rank(arrays, queued, 10**6, EngineConfig(primary="LQF")),
                          queue_rank(arrays, queued, 10**6, EngineConfig(primary=lqf)))
    with pytest.raises(BadInput, match="its key gives 2 values"):
        run(arrays, EngineConfig(primary=SortKey("short", lambda a: np.zeros(2))))
