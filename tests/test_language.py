"""Text in another language than English gets a caution: faithwatch's models read English only."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

# written for these tests; none is from a data set
FOREIGN = [
    ("French", "La tour Eiffel a été construite en 1889 pour l'Exposition universelle de Paris."),
    ("French", "Le conseil municipal a voté mardi une hausse des impôts, mais les habitants ne sont pas d'accord."),
    ("Spanish", "El puente fue inaugurado en 1932 y es uno de los más largos del país."),
    ("German", "Die Brücke wurde im Jahr 1932 eröffnet und ist eine der längsten des Landes."),
    ("Italian", "Il ponte è stato inaugurato nel 1932 ed è uno dei più lunghi del paese."),
    ("Portuguese", "A empresa anunciou que as vendas cresceram dez por cento, mas o lucro não aumentou."),
    ("Dutch", "Het bedrijf maakte bekend dat de omzet met tien procent is gestegen, maar de winst niet."),
    ("CJK script", "东京是日本的首都。"),
    ("CJK script", "東京は日本の首都です。"),  # kanji and kana together
    ("Cyrillic script", "Мост был открыт в 1932 году."),
    ("Arabic script", "القاهرة هي عاصمة مصر."),
    ("Hangul script", "서울은 한국의 수도입니다."),
]

ENGLISH = [
    "The Eiffel Tower was built between 1887 and 1889 for the World's Fair.",
    "Kim Il Sung's son is called Kim Jong Il.",  # "il" twice: one foreign word only
    "La Villette's City des Sciences et de l'Industrie puts the accent on public participation.",
    "Tokyo (東京) is the capital of Japan.",
    "Le Mans and El Paso are far apart.",
    '{"name": "Cafe Roma", "hours": {"Monday": "11:0-22:0"}, "city": "Las Vegas"}',  # a record: few words
    "| city | country |\n| --- | --- |\n| Lyon | France |\n| Porto | Portugal |",
    "",
    "12 345 678",
]


@pytest.mark.parametrize(("language", "text"), FOREIGN)
def test_text_in_another_language_is_named(language, text):
    from faithwatch.text import other_language

    assert other_language(text) == language


@pytest.mark.parametrize("text", ENGLISH)
def test_english_tables_and_foreign_names_read_as_english(text):
    from faithwatch.text import other_language

    assert other_language(text) is None


def test_passages_are_read_together():
    from faithwatch.text import other_language

    assert other_language(["Die Brücke wurde 1932 eröffnet.", "Sie ist eine der längsten des Landes und wird noch"
                           " heute genutzt."]) == "German"
    assert other_language(["The bridge opened in 1932.", "东京"]) is None  # the letters are mostly Latin


def test_check_notes_name_the_passages_or_else_the_response():
    from faithwatch.results import check_notes

    chat = "Ana: Hi all.\nBen: Hi.\nAna: Shall we start?"
    french = FOREIGN[0][1]
    assert check_notes([ENGLISH[0]], french, detector=True)[0].startswith("the response reads as French")
    assert [n[:29] for n in check_notes([french, french], french, detector=True)] == ["the context reads as French: "]
    assert len(check_notes([chat], ENGLISH[0], detector=True)) == 1  # the transcript caution
    assert check_notes([chat], ENGLISH[0], detector=False) == []  # that one is about the detector only
    assert check_notes([ENGLISH[0]], ENGLISH[0], detector=True) == []


def test_verdict_notes_name_the_context_or_else_the_answer():
    from faithwatch.results import SentenceReport, verdict_notes

    def sentence(text: str) -> SentenceReport:
        return SentenceReport(index=0, text=text, start=0, end=len(text), token_start=0, token_end=1, features={},
                              score=0.5, flagged=False, detector="test")

    french = FOREIGN[0][1]
    notes = verdict_notes(ENGLISH[0], [sentence(french)])
    assert len(notes) == 1 and notes[0].startswith("the answer reads as French: faithwatch's models")
    notes = verdict_notes(french, [sentence(french)])  # the context's note only, not a second one
    assert len(notes) == 1 and notes[0].startswith("the context reads as French")
    assert verdict_notes(ENGLISH[0], [sentence(ENGLISH[0])]) == []


def test_check_notes_a_foreign_response_and_batch_contexts(tmp_path, capsys):
    from faithwatch.cli import app as cli_app
    from faithwatch.cli._common import batch_language_note, input_contexts

    (tmp_path / "c.txt").write_text(ENGLISH[0], encoding="utf-8")
    (tmp_path / "fr.txt").write_text(FOREIGN[0][1], encoding="utf-8")
    (tmp_path / "en.txt").write_text(ENGLISH[0], encoding="utf-8")
    runner = CliRunner()
    base = ["check", "-c", str(tmp_path / "c.txt"), "--extractor", "sentence", "--checker", "alignment",
            "--alignment", "lexical", "-r"]
    french = runner.invoke(cli_app, [*base, str(tmp_path / "fr.txt")], terminal_width=300)
    assert french.exit_code == 0 and "the response reads as French" in french.output
    as_json = runner.invoke(cli_app, [*base, str(tmp_path / "fr.txt"), "--json"], terminal_width=300)
    notes = json.loads(as_json.stdout.strip().splitlines()[-1])["notes"]
    assert len(notes) == 1 and notes[0].startswith("the response reads as French: ")
    english = runner.invoke(cli_app, [*base, str(tmp_path / "en.txt")], terminal_width=300)
    assert english.exit_code == 0 and "reads as" not in english.output
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"id": "a", "context": FOREIGN[0][1], "response": "x"},
        {"id": "b", "context": [FOREIGN[7][1]], "response": "x"},
        {"id": "c", "context": FOREIGN[1][1], "response": "x"},
        {"id": "d", "context": ENGLISH[0], "response": "x"}]) + "\n", encoding="utf-8")
    assert batch_language_note(input_contexts(src, check=True)) is True
    said = " ".join(capsys.readouterr().err.split())
    assert "3 of 4 contexts read as French (2), CJK script (1):" in said
    assert batch_language_note([ENGLISH[0]]) is False and capsys.readouterr().err == ""
    assert batch_language_note([FOREIGN[2][1]]) is True  # a batch of one
    assert " ".join(capsys.readouterr().err.split()).startswith("note: the context reads as Spanish: ")
