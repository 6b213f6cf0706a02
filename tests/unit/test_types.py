"""The type checker on the core (tests/typecheck.py): its errors never grow, and a fix is
recorded, so that the baseline only shrinks."""
from tests.typecheck import baseline, errors


def test_the_core_s_type_errors_only_shrink():
    found, base = errors(), baseline()
    grown = [f"{k}: {found[k]} (baseline {base[k]})" for k in sorted(found)
             if found[k] > base[k]]
    assert not grown, "new type errors: " + "; ".join(grown)
    fixed = [k for k in sorted(base) if found[k] < base[k]]
    assert not fixed, ("fewer type errors than the baseline, record them: "
                       ".venv/bin/python -m tests.typecheck --write (" + ", ".join(fixed) + ")")
