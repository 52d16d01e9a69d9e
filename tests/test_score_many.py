"""Many records per forward pass: Monitor.score_many equals Monitor.score record by record, for every signal."""

from __future__ import annotations

import numpy as np
import pytest

from faithwatch.errors import FaithwatchError

TOL = 1e-4
CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It was built "
           "from 1887 to 1889 by the company of Gustave Eiffel. It is 330 metres tall.")
RECORDS = [
    ("Who built it?", CONTEXT, "Gustave Eiffel's company built it. It took two years."),
    ("Where?", "Paris is in France.", "In France."),
    ("How tall is it?", CONTEXT + " " + CONTEXT, "It is 330 metres tall. It is made of iron. It is in Paris. "
     "Many people visit it every year, and it was the tallest structure in the world for decades."),
    ("When?", "It opened in 1889.", "It opened in 1889"),
    ("Empty?", "Some context.", "   "),  # a bad record: reported in its place, the others go on
]


@pytest.mark.parametrize("batch_size", [1, 2, 8])
def test_score_many_equals_score(full_monitor, batch_size, one_thread):
    many = full_monitor.score_many(RECORDS, batch_size=batch_size)
    assert isinstance(many[-1], FaithwatchError) and "empty" in str(many[-1])
    for record, got in zip(RECORDS[:-1], many[:-1], strict=True):
        want = full_monitor.score(*record)
        assert [s.text for s in got.sentences] == [s.text for s in want.sentences] and want.sentences
        for a, b in zip(got.sentences, want.sentences, strict=True):
            assert set(a.features) == set(b.features)
            for name, value in b.features.items():
                if value is None:
                    assert a.features[name] is None, name
                else:
                    assert a.features[name] == pytest.approx(value, abs=TOL), name
            for name, vector in b.vectors.items():
                np.testing.assert_allclose(a.vectors[name], vector, atol=TOL, err_msg=name)
            assert a.score == pytest.approx(b.score, abs=TOL)
        for field in ("logprob", "entropy", "kl", "twin_logprob"):
            np.testing.assert_allclose(getattr(got.records, field), getattr(want.records, field), atol=TOL,
                                       err_msg=field)
        np.testing.assert_allclose(np.asarray(got.records.lookback), np.asarray(want.records.lookback), atol=TOL)
        np.testing.assert_allclose(np.asarray(got.records.hidden), np.asarray(want.records.hidden), atol=TOL)


def test_score_batch_size_writes_the_same_rows(tiny_model_dir, tmp_path, one_thread):
    import json

    from typer.testing import CliRunner

    from faithwatch.cli import app

    src = tmp_path / "in.jsonl"
    lines = [json.dumps({"id": f"r{i}", "question": q, "context": c, "response": r}) for i, (q, c, r) in
             enumerate(RECORDS)]
    src.write_text("\n".join([*lines, lines[0]]) + "\n")  # the last one repeats an id
    base = ["score", "-i", str(src), "-m", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic",
            "--no-vectors"]
    outs = {}
    for size in (1, 3):
        out = tmp_path / f"out{size}.jsonl"
        result = CliRunner().invoke(app, [*base, "-o", str(out), "--batch-size", str(size)])
        assert result.exit_code == 1, result.output  # the blank response and the repeated id are bad records
        assert "4 scored" in result.output and "2 bad" in result.output
        outs[size] = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert set(outs[1]) == set(outs[3]) == {"r0", "r1", "r2", "r3"}
    for rid, row in outs[1].items():
        other = outs[3][rid]
        assert [s["text"] for s in row["sentences"]] == [s["text"] for s in other["sentences"]]
        for a, b in zip(row["sentences"], other["sentences"], strict=True):
            assert a["score"] == pytest.approx(b["score"], abs=TOL)
