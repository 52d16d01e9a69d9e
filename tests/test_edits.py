"""Near-copy edit evidence (alignment/edits.py): swapped numbers, flipped negations, swapped words."""

from __future__ import annotations

import pytest

from faithwatch.alignment.edits import EDIT_FEATURES, MIN_MATCH, EditScorer, tokens

CONTEXT = ("The Kellner Street Bridge opened to traffic on 14 May 1931 after four years of construction. "
           "It was designed by the engineer Margaret Hollis. Tolls were not collected after 1958. "
           "Her first exhibition sold only three paintings.")


@pytest.fixture()
def scorer():
    return EditScorer()


def test_verbatim_copy_has_no_edits(scorer):
    f = scorer.evidence("It was designed by the engineer Margaret Hollis.", CONTEXT)
    assert list(f) == list(EDIT_FEATURES)
    assert f == {"edit_match": 1.0, "edit_swap_num": 0.0, "edit_swap_word": 0.0, "edit_neg_flip": 0.0}


def test_changed_date_is_a_number_swap(scorer):
    f = scorer.evidence("The Kellner Street Bridge opened to traffic on 14 May 1934 after four years of "
                        "construction.", CONTEXT)
    assert f["edit_swap_num"] == 1.0 and f["edit_neg_flip"] == 0.0 and f["edit_match"] >= 0.9


def test_spelled_out_numbers_compare_as_digits(scorer):
    assert scorer.evidence("Her first exhibition sold only 3 paintings.", CONTEXT)["edit_swap_num"] == 0.0
    assert scorer.evidence("Her first exhibition sold only seven paintings.", CONTEXT)["edit_swap_num"] == 1.0


@pytest.mark.parametrize("sentence", ["Tolls were collected after 1958.", "Tolls weren't ever dropped after 1958."])
def test_negation_flip_against_the_source(scorer, sentence):
    flipped = scorer.evidence(sentence, CONTEXT)["edit_neg_flip"]
    assert flipped == (0.0 if "n't" in sentence else 1.0)  # "weren't" keeps the one negation


def test_swapped_name_is_a_word_swap(scorer):
    f = scorer.evidence("It was designed by the engineer Helen Carrick.", CONTEXT)
    assert f["edit_swap_word"] == 1.0 and f["edit_swap_num"] == 0.0


def test_unrelated_sentence_has_no_source(scorer):
    f = scorer.evidence("Penguins cannot fly but swim very well.", CONTEXT)
    assert f["edit_match"] < MIN_MATCH
    assert f["edit_swap_num"] == f["edit_swap_word"] == f["edit_neg_flip"] == 0.0


def test_tokens_normalise_numbers_and_contractions():
    keys = [t.key for t in tokens("It didn't cost 1,000 dollars or two.")]
    assert "not" in keys and "1000" in keys and "2" in keys


def test_bad_input_is_refused(scorer):
    with pytest.raises(ValueError):
        scorer.evidence("x", "")


@pytest.mark.parametrize("sentence", [
    "Two players were arrested on charges of disorderly conduct.",  # the source's "not" is in a dropped clause
    "5. If using a gas grill, set it up for three-zone grilling.",  # a list number, not a changed fact
])
def test_cut_clauses_and_list_numbers_are_not_edits(scorer, sentence):
    context = ("A suspect was arrested and two individuals not involved in the dispute were arrested on charges of "
               "disorderly conduct. 4 If using a gas grill, set it up for three-zone grilling.")
    f = scorer.evidence(sentence, context)
    assert f["edit_match"] >= MIN_MATCH
    assert f["edit_swap_num"] == f["edit_swap_word"] == f["edit_neg_flip"] == 0.0


def test_a_swap_to_a_value_found_elsewhere_in_the_context_is_not_counted(scorer):
    context = "Step 4: fold the top left corner down. Step 5: fold the top right corner down."
    assert scorer.evidence("Fold the top right corner down.", context)["edit_swap_word"] == 0.0
