"""What the docs state about the code is the code's: the library example runs, the decision
rules are the ones ``decide`` applies, and every column and risk value of the candidates
table is in its legend."""
import re
from pathlib import Path

from advisor.views.advice import CANDIDATES_LEGEND, LIMITS
from advisor.whatif.decision import decision_rules

ROOT = Path(__file__).resolve().parents[2]


def _between(path: Path, start: str, end: str) -> str:
    text = path.read_text()
    return text[text.index(start) + len(start):text.index(end, text.index(start))]


def test_the_library_example_runs(capsys):
    block = _between(ROOT / "docs" / "architecture.md", "<!-- library-example -->", "\n```\n")
    code = block.split("```python\n", 1)[1]
    exec(compile(code, "docs/architecture.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.strip(), "the example printed nothing"
    assert "weeks replayed" in out or "no change" in out, out


def test_the_decision_rules_in_the_docs_are_the_code_s():
    block = _between(ROOT / "docs" / "recommend.md", "<!-- decision-rules:",
                     "<!-- /decision-rules -->")
    block = block.split("-->", 1)[1]
    assert block.split() == " ".join(f"* {r}" for r in decision_rules()).split()
    # no other page restates the rules with figures of its own
    for page in (*(ROOT / "docs").glob("*.md"), ROOT / "README.md"):
        text = page.read_text()
        assert not re.search(r"--min-wins.{0,20}\(75%\) of the samples", text), page.name


def test_every_risk_value_and_column_is_in_the_legend():
    for word in LIMITS.values():
        assert re.search(rf"\b{word} \(", CANDIDATES_LEGEND), word
    for column in ("past", "gain", "wins", "push", "risk"):
        assert re.search(rf"\b{column}: ", CANDIDATES_LEGEND), column
    assert "futures sampled for the candidate" in CANDIDATES_LEGEND
