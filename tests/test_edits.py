"""Near-copy edit evidence (alignment/edits.py): swapped numbers, flipped negations, swapped words."""

from __future__ import annotations

import subprocess
import sys

import pytest

import faithwatch.alignment.edit_rules as rules_module
import faithwatch.alignment.edits as edits_module
from faithwatch.alignment.edit_words import (
    CONTRADICTORIES,
    CONTRAST_GROUPS,
    CONTRASTS,
    OPPOSITE_PAIRS,
    OPPOSITES,
    classes,
    forms,
    opposites,
    parse_groups,
)
from faithwatch.alignment.edits import EDIT_FEATURES, MIN_MATCH, EditScorer, tokens
from faithwatch.text import MONTHS, WEEKDAYS, stem

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


def test_an_answer_preamble_is_not_an_edit(scorer):
    copy = "It was designed by the engineer Margaret Hollis."
    assert scorer.evidence("Based on the given passages, " + copy, CONTEXT) == scorer.evidence(copy, CONTEXT)
    f = scorer.evidence("According to the context, tolls were not collected after 1961.", CONTEXT)
    assert f["edit_swap_num"] == 1.0  # the preamble no longer hides the near copy's edit


def test_changed_date_is_a_number_swap(scorer):
    f = scorer.evidence("The Kellner Street Bridge opened to traffic on 14 May 1934 after four years of "
                        "construction.", CONTEXT)
    assert f["edit_swap_num"] == 1.0 and f["edit_neg_flip"] == 0.0 and f["edit_match"] >= 0.9


def test_spelled_out_numbers_compare_as_digits(scorer):
    assert scorer.evidence("Her first exhibition sold only 3 paintings.", CONTEXT)["edit_swap_num"] == 0.0
    assert scorer.evidence("Her first exhibition sold only seven paintings.", CONTEXT)["edit_swap_num"] == 1.0


def test_a_decimal_the_context_writes_with_a_space_is_found(scorer):
    # v48: "31. 8" (which also splits the context's sentence after "31.") holds 31.8
    context = ("Doctors say the number is rising. And by 2030 that figure is expected to surge to 31. 8 million "
               "sufferers, the charity said.")
    copy = "By 2030 that figure is expected to surge to {} million sufferers."
    assert scorer.evidence(copy.format("31.8"), context)["edit_swap_num"] == 0
    assert scorer.evidence(copy.format("31.9"), context)["edit_swap_num"] == 1


def test_a_correct_unit_conversion_is_no_edit(scorer):
    # v49: the parenthesis is left out of the comparison when it converts the number before it
    context = "Reheat the following foods to 165 °F for 15 seconds within 2 hours, the guidance says."
    assert scorer.evidence("Reheat the following foods to 165°F (74°C) for 15 seconds within 2 hours.",
                           context)["edit_match"] == 1.0
    assert scorer.evidence("Reheat the following foods to 175°F (79°C) for 15 seconds within 2 hours.",
                           context)["edit_swap_num"] == 1.0


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


def _exhaustive_source(sentence: str, context: str) -> tuple[float, list[str]]:
    """The source as every context sentence compared in order gives it (the first with the best coverage)."""
    import difflib

    from faithwatch.text import split_sentences

    sent = tokens(sentence)
    content = [i for i, t in enumerate(sent) if t.content]
    best, keys = 0.0, []
    for source in split_sentences(context):
        theirs = [t.key for t in tokens(source)]
        matcher = difflib.SequenceMatcher(None, [t.key for t in sent], theirs, autojunk=False)
        aligned = {a + k for a, _, n in matcher.get_matching_blocks() for k in range(n)}
        cov = sum(i in aligned for i in content) / len(content) if content else 0.0
        if cov > best:
            best, keys = cov, theirs
    return best, keys


def test_pruned_source_search_equals_comparing_every_sentence(scorer):
    import json
    from pathlib import Path

    # ties: two context sentences cover a sentence equally; the first must win, as in the exhaustive search
    tied = ("The bridge opened in 1931 to traffic. The bridge opened in 1931 to trains. "
            "Traffic on the bridge grew after it opened. The bridge opened in 1931 to traffic.")
    cases = [(s, tied) for s in ("The bridge opened in 1931.", "The bridge opened to traffic and trains.",
                                 "Traffic grew.", "Nothing here matches.", "The, a, of.")]
    rows = [json.loads(line) for line in (Path(__file__).parent / "data" / "blatant.jsonl").open()][:60]
    cases += [(r["sentence"], r["context"]) for r in rows]
    cases += [(r["sentence"], rows[(i + 7) % len(rows)]["context"]) for i, r in enumerate(rows)]  # weak matches
    for sentence, context in cases:
        match, best = scorer._best_source(tokens(sentence), context)
        want_match, want_keys = _exhaustive_source(sentence, context)
        assert match == want_match, sentence
        assert (best.matcher.b if best else []) == want_keys, sentence


RETURNS = ("Orders over 50 dollars ship free within the country. Return shipping is free for Plus members; other "
           "customers pay a flat fee of 6 dollars. Residents found a card on their doorstep. "
           "The fee applies to them from May.")


@pytest.mark.parametrize(("sentence", "widened"), [
    ("Return shipping is free for everyone.", 1.0),  # a restriction (and the rest of its sentence) put as "everyone"
    ("Return shipping is free for anyone.", 1.0),
    ("Return shipping is free for Plus members.", 0.0),
    ("Return shipping is free for all Plus members.", 0.0),  # "all" added, nothing replaced
    ("Residents found a card on every doorstep.", 0.0),  # "their" -> "every": a determiner, and not a universal
    ("Orders over 50 dollars ship free everywhere.", 1.0),  # "within the country" -> "everywhere"
    ("The fee applies to everyone from May.", 0.0),  # "them" restricts nothing the sentence says
    ("Return shipping is free for Everything Club.", 0.0),  # capitalised: a name, not a universal word
    ("Return shipping is always free.", 1.0),  # "always" inserted, "for Plus members" left out
    ("Return shipping is free, always.", 1.0),  # the same at the end
    ("Return shipping is always free for Plus members.", 0.0),  # the restriction kept; another clause left out
    ("Everyone found a card on their doorstep.", 1.0),  # the subject "Residents" put as "Everyone"
    ("Residents always found a card.", 1.0),  # "on their doorstep" left out
    ("Residents always found a card on their doorstep.", 0.0),  # nothing left out: "always" restricts nothing cut
])
def test_a_restriction_widened_to_all_counts_as_a_flip(scorer, sentence, widened):
    f = scorer.evidence(sentence, RETURNS)
    assert f["edit_neg_flip"] == widened and f["edit_swap_num"] == f["edit_swap_word"] == 0.0


QUANTIFIED = ("Some residents recycle their glass bottles every week. Most of the shops close early on Sundays. "
              "The bus is usually late in the morning. Only paid members can use the pool. All 40 staff got a bonus.")


@pytest.mark.parametrize(("sentence", "widened"), [
    ("All residents recycle their glass bottles every week.", 1.0),  # a partial quantifier put as "all" (v68)
    ("All of the shops close early on Sundays.", 1.0),
    ("Each of the shops closes early on Sundays.", 1.0),
    ("The bus is always late in the morning.", 1.0),  # a frequency word put as "always"
    ("All members can use the pool.", 1.0),  # "Only paid" put as "All"
    ("Some residents recycle their glass bottles every week.", 0.0),  # restated
    ("Most of the shops close early on Sundays.", 0.0),
    ("Many of the shops close early on Sundays.", 0.0),  # one partial word for another: not a widening
    ("Some of the 40 staff got a bonus.", 0.0),  # the other way round: not read (narrower)
    ("Only paid members can use the pool every day.", 0.0),  # "every" added, nothing replaced
])
def test_a_partial_quantifier_put_as_all_is_a_widening(scorer, sentence, widened):
    assert scorer.evidence(sentence, QUANTIFIED)["edit_neg_flip"] == widened


SEVERAL = ("Harwell Bank is one of the largest lenders in the region. Marta Silva was among the first women to join "
           "the force. Ana Ruiz is one of the founders of the club.")


@pytest.mark.parametrize(("sentence", "flipped"), [
    ("Harwell Bank is the largest lender in the region.", 1.0),  # one of several made the only one (v69)
    ("Marta Silva was the first woman to join the force.", 1.0),
    ("Ana Ruiz is the founder of the club.", 1.0),
    ("Harwell Bank is one of the largest lenders in the region.", 0.0),  # restated
    ("Marta Silva was one of the first women to join the force.", 0.0),  # "among" for "one of": a replacement
    ("Ana Ruiz is a founder of the club.", 0.0),  # "a" for "one of the": a replacement, not read
    ("Harwell Bank is the largest lender.", 1.0),  # "in the region" cut too: still the only one
])
def test_one_of_left_out_before_the_is_a_flip(scorer, sentence, flipped):
    assert scorer.evidence(sentence, SEVERAL)["edit_neg_flip"] == flipped


NEGATION_LED = ("No passengers were hurt when the ferry struck the pier. None of the 180 guests was injured in the "
                "fire. Not all of the money has been spent, the report found. Not many voters came to the polls in "
                "the town.")


@pytest.mark.parametrize(("sentence", "flipped"), [
    ("Passengers were hurt when the ferry struck the pier.", 1.0),  # the leading "No" left out (v70)
    ("All of the money has been spent, the report found.", 1.0),  # "Not" left out
    ("Some of the 180 guests were injured in the fire.", 1.0),  # "Some" for "None"
    ("Two people were hurt when the ferry struck the pier.", 1.0),  # "Two people were" for "No passengers were"
    ("No travellers were hurt when the ferry struck the pier.", 0.0),  # restated
    ("None of the 180 guests were hurt in the fire.", 0.0),
    ("Few voters came to the polls in the town.", 0.0),  # a contradictory restates "Not many" (v37)
])
def test_a_negation_leading_the_source_changed_is_a_flip(scorer, sentence, flipped):
    assert scorer.evidence(sentence, NEGATION_LED)["edit_neg_flip"] == flipped


@pytest.mark.parametrize(("sentence", "context"), [
    ("The museum is not open on Mondays.", "No, the museum is not open on Mondays."),  # an answer's "No," (v70)
    ("No, the museum is not open on Mondays.", "The museum is not open on Mondays."),
    ("Not really, the museum is not open on Mondays.", "The museum is not open on Mondays."),
])
def test_an_answers_no_is_no_leading_negation(scorer, sentence, context):
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == 0.0


def test_always_inserted_into_a_statement_about_every_case_restates_it(scorer):
    context = "The shop opens at 8 am every day except on public holidays, but the café closes on Mondays."
    assert scorer.evidence("The shop always opens at 8 am.", context)["edit_neg_flip"] == 0.0  # "every day"
    # the clause restated is the café's, which speaks of no "every": "on Mondays" left out widens it
    assert scorer.evidence("The café always closes.", context)["edit_neg_flip"] == 1.0


def test_a_long_widened_end_leaves_the_other_edits_counted(scorer):
    """The long end that a widening may replace is not one more change towards MAX_EDITS: the swapped number
    still counts. "always" and "everyone" widen one restriction: one flip."""
    context = "Exchanges within 30 days are free for Plus members; other customers pay a fee of 6 dollars."
    f = scorer.evidence("Exchanges within 60 days are always free for everyone.", context)
    assert f["edit_swap_num"] == 1.0 and f["edit_neg_flip"] == 1.0


SCHEDULE = ("The Eastgate pool opens at 7 am on weekdays. On weekends it opens at 9 am. Chile's copper exports rose by "
            "8 percent. The composer was taught the piano by her mother. Her father ran a bookshop.")


@pytest.mark.parametrize("sentence, flipped", [
    ("The Eastgate pool opens at 7 pm on weekdays.", 1.0),  # am -> pm
    ("The Eastgate pool opens at 7 am on weekends.", 1.0),  # weekday -> weekend
    ("Chile's copper imports rose by 8 percent.", 1.0),  # exports -> imports
    ("The composer was taught the piano by her father.", 1.0),  # mother -> father
    ("The Eastgate pool opens at 7 am on weekdays.", 0.0),  # a copy
    ("On weekends it opens at 9 am.", 0.0),  # a contrast word of the context, restated
    ("Her father ran a bookshop.", 0.0),
    ("The Eastgate pool opens at 7 am on Sundays.", 0.0),  # not a word of the same group: a name swap instead
])
def test_a_swap_within_a_group_of_contrast_words_is_a_flip(scorer, sentence, flipped):
    f = scorer.evidence(sentence, SCHEDULE)
    assert f["edit_neg_flip"] == flipped
    assert f["edit_swap_word"] == (1.0 if "Sundays" in sentence else 0.0)


def test_contrast_groups_are_classes_of_synonyms():
    from faithwatch.alignment.edit_words import CONTRASTS, OPPOSITES, stem

    for group in CONTRASTS:
        stems = [s for cls in group for s in cls]
        assert len(group) >= 2 and len(stems) == len(set(stems)), group  # no stem in two classes of a group
    assert frozenset((stem("monthly"), stem("annually"))) in OPPOSITES
    assert frozenset((stem("kilometres"), stem("miles"))) in OPPOSITES
    for same in (("annually", "yearly"), ("metres", "meters"), ("feet", "ft"), ("start", "finish")):
        assert frozenset(map(stem, same)) not in OPPOSITES, same  # finish: "click Apply to start/finish syncing"


MEASURES = ("The Eiffel Tower is 330 metres tall. Tickets to the top cost 29 euros. The crossing takes 40 minutes. "
            "It was the tallest structure in the world until 1930.")


@pytest.mark.parametrize("sentence, flipped", [
    ("The Eiffel Tower is 330 feet tall.", 1.0),
    ("The Eiffel Tower is 330 meters tall.", 0.0),  # another spelling of the same unit
    ("Tickets to the top cost 29 dollars.", 1.0),
    ("The crossing takes 40 hours.", 1.0),
    ("It was the shortest structure in the world until 1930.", 1.0),
])
def test_a_swapped_unit_currency_or_superlative_is_a_flip(scorer, sentence, flipped):
    assert scorer.evidence(sentence, MEASURES)["edit_neg_flip"] == flipped


TRIAL = ("The new vaccine was effective in adults over 60. Fishing without a permit is illegal on the estuary. "
         "It cleared him of misconduct.")


@pytest.mark.parametrize("sentence, flipped", [
    ("The new vaccine was ineffective in adults over 60.", 1.0),  # a negating prefix added
    ("Fishing without a permit is legal on the estuary.", 1.0),  # dropped
    ("The new vaccine was effective in adults under 60.", 1.0),  # over -> under
    ("It cleared him of conduct.", 0.0),  # "mis" is not a negating prefix here
    ("The new vaccine was effective in adults over 60.", 0.0),
])
def test_a_negating_prefix_added_or_dropped_is_a_flip(scorer, sentence, flipped):
    assert scorer.evidence(sentence, TRIAL)["edit_neg_flip"] == flipped


def test_a_prefix_is_looked_for_on_stems_of_three_letters_or_more():
    assert rules_module._prefixed(tokens("unable"), tokens("able"))
    assert not rules_module._prefixed(tokens("unit"), tokens("it"))  # "it" is too short to be negated
    assert not rules_module._prefixed(tokens("unlikely to"), tokens("likely"))  # one word for one word only


@pytest.mark.parametrize("sentence, flipped", [
    ("The defendant was found innocent of fraud.", 1.0),
    ("The closure of the bridge is permanent.", 1.0),
    ("The two kingdoms remained at war for forty years.", 1.0),
    ("The summers are wet and the winters chilly.", 0.0),  # a reordered copy: its source holds both seasons
])
def test_antonyms_of_one_main_sense_are_flips_unless_the_source_holds_both(scorer, sentence, flipped):
    context = ("The defendant was found guilty of fraud. The closure of the bridge is temporary. The two kingdoms "
               "remained at peace for forty years. The winters are wet and the summers chilly.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("The company's profits fell by 12% last year.", 1.0),  # "fell" from the other clause, "rose" lost (v71)
    ("The company's profits rose by 12% last year.", 0.0),  # the first clause copied
    ("Its revenue fell slightly, while the company's profits rose by 12% last year.", 0.0),  # reordered
])
def test_an_opposite_the_source_holds_elsewhere_counts_once_the_replaced_word_is_lost(scorer, sentence, flipped):
    context = "The company's profits rose by 12% last year, while its revenue fell slightly."
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("A large colony of seals has settled on the sandbanks.", 1.0),  # size (v72)
    ("The bakery halved its output over the past year.", 1.0),  # doubling
    ("The council will close the pool next spring.", 1.0),  # a possibility made certain
    ("A small colony of seals has settled on the sandbanks.", 0.0),
    ("The council might close the pool next spring.", 0.0),  # "might" for "may": one class
])
def test_size_doubling_and_certainty_swaps_are_flips(scorer, sentence, flipped):
    context = ("A small colony of seals has settled on the sandbanks. The bakery doubled its output over the past "
               "year. The council may close the pool next spring.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("International flights leave from Terminal 2.", 1.0),  # a leading swap of opposites
    ("Domestic flights leave from Terminal 2.", 0.0),
    ("3. Domestic flights leave from Terminal 2.", 0.0),  # a leading list number is no edit
    ("However, domestic flights leave from Terminal 2.", 0.0),
    ("Ada Brenner was the second woman to chair the board.", 1.0),  # ordinals
])
def test_a_leading_opposite_and_an_ordinal_swap_are_flips(scorer, sentence, flipped):
    context = "Domestic flights leave from Terminal 2. Ada Brenner was the first woman to chair the board."
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, swapped", [
    ("24 people were injured in the crash.", 1.0),  # a count swapped where it leads the sentence (v50)
    ("Twenty-four people were injured in the crash.", 1.0),
    ("Twenty-five people were injured in the crash.", 0.0),
    ("1. 25 people were injured in the crash.", 0.0),  # a list number is no swap
    ("125 people were injured in the crash.", 1.0),
    ("Some 25 people were injured in the crash.", 0.0),
    ("Its evening appointments were used by 1,430.", 1.0),  # v54: a number ending a cut copy is no list number
    ("Its evening appointments were used by 1,340.", 0.0),
    ("Its evening appointments were used by 1,340 patients.", 0.0),
    ("Researchers tested more than 300 soil samples from farms.", 0.0),  # v56: "340" meets the bound
    ("Researchers tested about 350 soil samples from farms.", 0.0),
    ("Researchers tested more than 400 soil samples from farms.", 1.0),
    ("Researchers tested 300 soil samples from farms.", 1.0),
    ("Landlords must give at least 60 days' notice.", 1.0),  # the source's "at least 90" is a bound, not a value
])
def test_a_number_swapped_is_counted_where_it_leads_or_ends_the_copy_and_not_behind_a_bound_met(
        scorer, sentence, swapped):
    context = ("25 people were injured in the crash. The road reopened at 12. Its evening appointments were used by "
               "1,340 patients in the first three months of the trial. Researchers tested 340 soil samples from "
               "farms. Landlords must give at least 90 days' notice.")
    assert scorer.evidence(sentence, context)["edit_swap_num"] == swapped


@pytest.mark.parametrize("sentence, flipped", [
    ("The clinic opens at 8 p.m. on weekdays.", 1.0),  # v51: "p.m." read as pm
    ("The clinic opens at 8 P.M. on weekdays.", 1.0),
    ("The clinic opens at 8 a.m. on weekdays.", 0.0),
    ("The clinic opens at 8am on weekdays.", 0.0),
    ("It closes at 6 a.m.", 1.0),
    ("A ticket to the museum costs $15.", 1.0),  # v52: a currency symbol is its currency's word
    ("A ticket to the museum costs ¥15.", 1.0),
    ("A ticket to the museum costs €15.", 0.0),
    ("Students pay £10.", 1.0),
])
def test_a_swapped_time_of_day_or_currency_symbol_is_a_flip(scorer, sentence, flipped):
    context = ("The clinic opens at 8 a.m. on weekdays. It closes at 6 p.m. A ticket to the museum costs €15. "
               "Students pay €10.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flip", [
    ("Doors open at 7 a.m.", 1.0),  # v53: the end read against as many source tokens, the rest cut
    ("Doors open at 7 p.m.", 0.0),
    ("Sales of electric bikes decreased.", 1.0),
    ("Sales of electric bikes increased.", 0.0),
    ("Doors open at 7 in Leeds.", 0.0),  # an added name there is no swap (judged as a leading change)
])
def test_a_word_changed_where_a_cut_copy_ends_is_judged_as_a_leading_change(scorer, sentence, flip):
    context = ("Doors open at 7 p.m. and the concert starts at 8 p.m. Sales of electric bikes increased by 12 percent "
               "in the first quarter, according to the trade body.")
    evidence = scorer.evidence(sentence, context)
    assert evidence["edit_neg_flip"] == flip and evidence["edit_swap_word"] == 0.0


_LEAD_IN_CONTEXT = ("The poll published by the council found that 67% of voters backed the plan, while 29% opposed it. "
                    "A study by the cooperative's own engineers found that more homes drew power from the scheme this "
                    "winter than last winter. The firm blamed rising costs, and said it would close two of its five "
                    "factories in the north. The company said it would close 12 of its 40 shops in the south. Add the "
                    "hive top and reduce the hive entrance to 2 inches. You can increase it in a few weeks.")


@pytest.mark.parametrize("sentence, swapped, flip", [
    ("33% of voters backed the plan.", 1.0, 0.0),  # v65: the lead read against as many source tokens, the rest cut
    ("67% of voters backed the plan.", 0.0, 0.0),
    ("Some 33% of voters backed the plan.", 1.0, 0.0),
    ("A third of voters backed the plan.", 1.0, 0.0),  # a share in words is its percentage (v60)
    ("Two-thirds of voters backed the plan.", 0.0, 0.0),
    ("29% of voters backed the plan.", 0.0, 0.0),  # a number the context holds is no swap
    ("Fewer homes drew power from the scheme this winter.", 0.0, 1.0),
    ("More homes drew power from the scheme this winter.", 0.0, 0.0),
    ("Step 6: Homes drew power from the scheme this winter.", 0.0, 0.0),  # a list number, as in version 50
    ("Norvel Foods plans to open two of its five factories in the north.", 0.0, 1.0),  # v66: a reworded lead-in
    ("Norvel Foods plans to close two of its five factories in the north.", 0.0, 0.0),
    ("Norvel Foods plans to shut two of its five factories in the north.", 0.0, 0.0),
    ("Norvel Foods plans to close three of its five factories in the north.", 1.0, 0.0),
    ("Norvel Foods plans to close 12 of its 40 shops in the south.", 0.0, 0.0),  # "12" is in the context
    ("After a few weeks, you can increase the hive entrance to 2 inches.", 0.0, 0.0),  # "increase": in the context
])
def test_a_change_in_a_lead_in_is_judged_as_a_leading_change(scorer, sentence, swapped, flip):
    """A short lead for a longer lead-in of the source (v65), and the last word of a reworded lead-in (v66)."""
    evidence = scorer.evidence(sentence, _LEAD_IN_CONTEXT)
    assert (evidence["edit_swap_num"], evidence["edit_neg_flip"], evidence["edit_swap_word"]) == (swapped, flip, 0.0)


def test_a_currency_symbol_is_no_content_token():
    keys = [(t.key, t.content) for t in tokens("It cost £3m.")]
    assert keys[2] == (stem("pound"), False) and keys[3][0] == "3" and keys[4][0] == "1000000"


@pytest.mark.parametrize("sentence", ["Step 6: Serve with rice.", "6. Serve with rice.", "6 Serve with rice."])
def test_a_list_number_leading_either_sentence_is_no_swap(scorer, sentence):
    context = "3 Let it cook for three more minutes. 4 Serve with rice."
    assert scorer.evidence(sentence, context)["edit_swap_num"] == 0.0


@pytest.mark.parametrize("sentence", [
    "Sales fell by 8% in the quarter.", "The river falls every spring.", "Meals are served before take-off.",
    "The village lies 800 metres below sea level.", "Electric cars cost less to buy.",
    "The party made a loss of 12 seats.", "The launch was a failure.",
])
def test_every_opposite_pair_matches_stemmed_tokens(scorer, sentence):
    """Edits v11: the pairs are stemmed as tokens are (seven of them, written unstemmed, never matched before)."""
    context = ("Sales rose by 8% in the quarter. The river rises every spring. Meals are served after take-off. "
               "The village lies 800 metres above sea level. Electric cars cost more to buy. "
               "The party made a gain of 12 seats. The launch was a success.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == 1.0


def test_no_opposite_pair_is_left_unstemmed():
    from faithwatch.alignment.edit_words import OPPOSITE_PAIRS, OPPOSITES, stem

    for pair in OPPOSITE_PAIRS:
        assert frozenset(map(stem, pair.split())) in OPPOSITES, pair


@pytest.mark.parametrize("sentence, flipped", [
    ("Aspirin increased the risk of stroke by 20%.", 1.0),  # verbs of change, other direction (v12)
    ("Aspirin lowered the risk of stroke by 20%.", 0.0),  # the same direction: a restatement
    ("Membership dropped by 15% last year.", 1.0),
    ("The park receives 2.1 billion visitors a year.", 1.0),  # a scale word swapped (v12)
    ("The park receives 2.4 million visitors a year.", 0.0),  # a changed number: edit_swap_num, not a flip
])
def test_a_verb_of_change_or_a_scale_word_swapped_is_a_flip(scorer, sentence, flipped):
    context = ("Aspirin reduced the risk of stroke by 20%. Membership grew by 15% last year. "
               "The park receives 2.1 million visitors a year.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("The senator voted for the bill.", 1.0),  # stance groups (v14)
    ("The company confirmed the report.", 1.0),
    ("The jury convicted the mayor.", 1.0),
    ("The senator voted against the bill.", 0.0),
    ("The app runs only on phones.", 0.0),  # a narrowing "only" (v14 B) was not kept
])
def test_a_word_of_stance_swapped_is_a_flip(scorer, sentence, flipped):
    context = ("The senator voted against the bill. The company denied the report. The jury acquitted the mayor. "
               "The app runs on phones and tablets.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("The dam is 185 ft tall.", 1.0),  # unit abbreviations (v15 B)
    ("Bake it at 220°F.", 1.0),
    ("The crossing takes 2 mins.", 1.0),
    ("The dam is 185 metres tall.", 0.0),  # the same unit spelled out
    ("The crossing takes 2 hours.", 0.0),
    ("Tickets cost $15.", 1.0),  # a currency symbol is its currency's word (v52; v15 A was not kept)
])
def test_a_swapped_unit_abbreviation_is_a_flip(scorer, sentence, flipped):
    context = "The dam is 185 m tall. Bake it at 220°C. The crossing takes 2 hrs. Tickets cost €15."
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("Brazil beat Germany 7-1 in the semi-final.", 1.0),  # the two sides exchanged (v18)
    ("Helen Keller taught Anne Sullivan to read.", 1.0),  # two-word names
    ("Unemployment rose from 6 percent to 4 percent.", 1.0),  # numbers
    ("Germany beat Brazil 7-1 in the semi-final.", 0.0),  # the copy itself
    ("The Netherlands and Argentina met in the final.", 0.0),  # a coordination reorders nothing
    ("Spain plays France on Sunday.", 0.0),  # nor does a symmetric relation
    ("Italy, Germany and France signed the treaty.", 0.0),  # a reordered list
    ("Yeah, he started recording at Sun Records in 1954.", 0.0),  # a moved phrase restores no more of the source
    ("The composer was born in 1860 in Vienna.", 0.0),  # two phrases after the same preposition reordered (v25)
    ("Vienna was born in the composer in 1860.", 1.0),  # ... but not a party exchanged with one of them
])
def test_two_sides_exchanged_is_a_flip(scorer, sentence, flipped):
    context = ("Germany beat Brazil 7-1 in the semi-final. Anne Sullivan taught Helen Keller to read. Unemployment "
               "rose from 4 percent to 6 percent. Argentina and the Netherlands met in the final. France plays Spain "
               "on Sunday. France, Germany and Italy signed the treaty. His music career began there in 1954, "
               "recording at Sun Records with producer Sam Phillips. The composer was born in Vienna in 1860.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("The festival starts on 9 May and ends on 3 May.", 1.0),  # v106: two numbers traded across clauses
    ("Smith scored 8 points and Jones scored 12 points.", 1.0),
    ("The school has 35 pupils and 420 teachers.", 1.0),
    ("Doors open at 8 pm and the show starts at 6 pm.", 1.0),  # two phrases after "at", clauses apart
    ("The festival ends on 9 May and starts on 3 May.", 0.0),  # two clauses reordered, each with its number
    ("The market is held on 17 June and 10 June.", 0.0),  # a list of dates reordered
    ("The vote was held in 2020 and 2019.", 0.0),
])
def test_two_numbers_traded_across_clauses_is_a_flip(scorer, sentence, flipped):
    context = ("The festival starts on 3 May and ends on 9 May. Smith scored 12 points and Jones scored 8 points. "
               "The school has 420 pupils and 35 teachers. Doors open at 6 pm and the show starts at 8 pm. The "
               "market is held on 10 June and 17 June. The vote was held in 2019 and 2020.")
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("sentence, flipped", [
    ("Germany lost to Brazil 7-1 in the semi-final.", 1.0),  # v23: beat / lost
    ("Profits missed forecasts in May.", 1.0),  # beat / missed
    ("Brazil lost to Germany 7-1 in the semi-final.", 0.0),  # the converse restates the source
    ("Brazil were beaten by Germany 7-1 in the semi-final.", 0.0),
])
def test_beat_swapped_for_lost_or_missed_is_a_flip(scorer, sentence, flipped):
    context = "Germany beat Brazil 7-1 in the semi-final. Profits beat forecasts in May."
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


#: a context per set of later contrast groups (v21, v22, v26, v31, v73-v80, v82, v83, v90), and sentences against
#: it: a swap flips; the copy, a word of the same class and a word of no group do not
LATER_GROUPS = {
    ("The delays were caused mainly by the snow. The club fired its coach after the defeat. The bank borrowed 5 "
     "billion euros from the state. The team lost its away match in Porto. The employee pays for the insurance."): [
        ("The delays were caused partly by the snow.", 1.0), ("The club hired its coach after the defeat.", 1.0),
        ("The bank lent 5 billion euros to the state.", 1.0), ("The team lost its home match in Porto.", 1.0),
        ("The employer pays for the insurance.", 1.0), ("The delays were caused mostly by the snow.", 0.0),
        ("The club sacked its coach after the defeat.", 0.0), ("The team lost its away match in Porto.", 0.0)],
    ("The road will stay closed until March. Arsenal led at half-time. Police arrested the two men on Friday. The "
     "landlord pays for the roof. The agency launched the satellite in April."): [
        ("The road will stay closed since March.", 1.0), ("Arsenal trailed at half-time.", 1.0),
        ("Police released the two men on Friday.", 1.0), ("The tenant pays for the roof.", 1.0),
        ("The agency scrapped the satellite in April.", 1.0), ("The road will stay closed until March.", 0.0),
        ("Police detained the two men on Friday.", 0.0), ("The owner pays for the roof.", 0.0)],
    ("Smoking causes most cases of lung cancer. The poet died in Dublin in 1950. The king opened parliament on "
     "Wednesday. Her aunt still lives in the farmhouse."): [
        ("Smoking prevents most cases of lung cancer.", 1.0), ("The poet was born in Dublin in 1950.", 1.0),
        ("The queen opened parliament on Wednesday.", 1.0), ("Her uncle still lives in the farmhouse.", 1.0),
        ("Smoking causes most cases of lung cancer.", 0.0), ("The monarch opened parliament on Wednesday.", 0.0)],
    ("The clinic treated 64 patients with mild symptoms. The judge ordered the plaintiff to pay the costs. The "
     "tumour was benign. The bank will issue a new credit card."): [  # v31
        ("The clinic treated 64 patients with severe symptoms.", 1.0),
        ("The judge ordered the defendant to pay the costs.", 1.0), ("The tumour was malignant.", 1.0),
        ("The bank will issue a new debit card.", 1.0), ("The clinic treated 64 doctors with mild symptoms.", 1.0),
        ("The clinic treated 64 patients with moderate symptoms.", 1.0),
        ("The tumour was benign.", 0.0), ("The bank will issue a new credit card.", 0.0)],
    ("Chief executive Anna Berg said the results were encouraging. Union leaders welcomed the decision to raise the "
     "minimum wage. The new bridge is cheaper to maintain than the old one. The coach was sacked after a run of six "
     "defeats. The outbreak was caused by a virus found in the water supply."): [  # v73
        ("Chief executive Anna Berg said the results were disappointing.", 1.0),
        ("Union leaders condemned the decision to raise the minimum wage.", 1.0),
        ("Union leaders criticised the decision to raise the minimum wage.", 1.0),
        ("The new bridge is pricier to maintain than the old one.", 1.0),
        ("The coach resigned after a run of six defeats.", 1.0),
        ("The outbreak was caused by bacteria found in the water supply.", 1.0),
        ("Chief executive Anna Berg said the results were promising.", 0.0),
        ("The coach was fired after a run of six defeats.", 0.0)],
    ("Shares in Coltrane Foods jumped 8% on Tuesday. Oil prices slumped to a three-year low. The striker scored twice "
     "in the second half."): [  # v74
        ("Shares in Coltrane Foods plunged 8% on Tuesday.", 1.0), ("Oil prices soared to a three-year low.", 1.0),
        ("The striker scored once in the second half.", 1.0), ("Shares in Coltrane Foods rose 8% on Tuesday.", 0.0),
        ("Oil prices fell to a three-year low.", 0.0), ("The striker scored twice in the second half.", 0.0)],
    ("The appeals court upheld the ban on Tuesday. The judge granted the request for bail. Analysts upgraded the stock "
     "to buy. The central bank announced a rate hike of 0.25 points."): [  # v75
        ("The appeals court overturned the ban on Tuesday.", 1.0), ("The judge denied the request for bail.", 1.0),
        ("Analysts downgraded the stock to buy.", 1.0),
        ("The central bank announced a rate cut of 0.25 points.", 1.0),
        ("The ban was upheld by the appeals court on Tuesday.", 0.0),
        ("The central bank announced a rate hike of a quarter point.", 0.0)],
    ("Three miners were killed in the collapse on Friday. Police said the suspect was taken to hospital. The drug "
     "reduced tumour growth in mice by 40%."): [  # v76
        ("Three miners were injured in the collapse on Friday.", 1.0),
        ("Police said the victim was taken to hospital.", 1.0),
        ("The drug reduced tumour growth in humans by 40%.", 1.0),
        ("Three miners died in the collapse on Friday.", 0.0),  # "survive / die" is another group
        ("The drug reduced tumour growth in mice by 40%.", 0.0)],
    ("The senator, a Democrat, voted against the bill. The bridge is made of steel. The fire started in the kitchen. "
     "The factory makes electric buses. The tournament is played on grass. The goalkeeper was injured. The study "
     "looked at the risk of dementia. All 40 passengers were rescued by fishing boats."): [  # v77
        ("The senator, a Republican, voted against the bill.", 1.0), ("The bridge is made of concrete.", 1.0),
        ("The fire started in the bedroom.", 1.0), ("The factory makes diesel buses.", 1.0),
        ("The factory makes electric trams.", 1.0), ("The tournament is played on clay.", 1.0),
        ("The striker was injured.", 1.0), ("The study looked at the risk of diabetes.", 1.0),
        ("All 40 passengers were rescued by helicopters.", 1.0),
        ("All 40 passengers were rescued by fishing vessels.", 0.0),  # one class
        ("The factory makes electric coaches.", 0.0), ("The bridge is made of steel.", 0.0)],
    ("The river burst its banks upstream of the town. The cafe is open for dinner on weekdays. The menu is vegetarian. "
     "The film was shot in the Arctic. The hospital hired 40 nurses. The market does not accept cheques. Owners will "
     "be contacted by letter. She wrote the song about her grandmother. The film is narrated by a retired "
     "fisherman."): [  # v78
        ("The river burst its banks downstream of the town.", 1.0), ("The cafe is open for lunch on weekdays.", 1.0),
        ("The menu is vegan.", 1.0), ("The film was shot in the Antarctic.", 1.0),
        ("The hospital hired 40 surgeons.", 1.0), ("The market does not accept coins.", 1.0),
        ("Owners will be contacted by phone.", 1.0), ("She wrote the poem about her grandmother.", 1.0),
        ("The film is narrated by a retired farmer.", 1.0),
        ("The cafe is open for supper on weekdays.", 0.0),  # one class
        ("Owners will be contacted by post.", 0.0), ("The river burst its banks upstream of the town.", 0.0)],
    ("The gate was painted red. She won the silver medal. He plays the violin. The farm keeps 400 sheep. The valley "
     "grows wheat. Heavy snow closed the pass. He needs a new kidney. The tank leaked nitrogen. The town runs on wind "
     "power. The school is Catholic. The body was found in the lake. The roof of the mosque fell in. She broke her "
     "left leg. He spoke on the radio. The drug is taken as a tablet. The fish live in freshwater pools. The study "
     "tracked wild apes. Two civilians were hurt. The fund holds mainly bonds. He served in the navy. The tunnel "
     "was closed."): [  # v79
        ("The gate was painted blue.", 1.0), ("She won the gold medal.", 1.0), ("He plays the piano.", 1.0),
        ("The farm keeps 400 pigs.", 1.0), ("The valley grows rice.", 1.0), ("Heavy rain closed the pass.", 1.0),
        ("He needs a new liver.", 1.0), ("The tank leaked oxygen.", 1.0), ("The town runs on solar power.", 1.0),
        ("The school is Protestant.", 1.0), ("The body was found in the river.", 1.0),
        ("The roof of the church fell in.", 1.0), ("She broke her left arm.", 1.0), ("He spoke on television.", 1.0),
        ("The drug is taken as an injection.", 1.0), ("The fish live in saltwater pools.", 1.0),
        ("The study tracked captive apes.", 1.0), ("Two soldiers were hurt.", 1.0),
        ("The fund holds mainly shares.", 1.0), ("He served in the army.", 1.0), ("The bridge was closed.", 1.0),
        ("The body was found in the sea.", 1.0),
        ("The drug is taken as a pill.", 0.0),  # one class
        ("The fund holds mainly bonds.", 0.0), ("She broke her left leg.", 0.0)],
    ("The region had its worst drought in years. She needs chemotherapy. The raid began at dawn. The bells ring at "
     "noon. The family upstairs complained. The last climb is uphill. Most homes are in coastal towns. The ferry "
     "serves the island. The fault was in the software. The car has a manual gearbox. The cracks are vertical. "
     "Runners go clockwise. The water was acidic. She won the singles title. The book came out in hardback. He "
     "fights at heavyweight. She won the freestyle race. The vaccine is free. The metal is a liquid. Most players "
     "are freelance."): [  # v80
        ("The region had its worst flood in years.", 1.0), ("She needs radiotherapy.", 1.0),
        ("The raid began at dusk.", 1.0), ("The bells ring at midnight.", 1.0),
        ("The family downstairs complained.", 1.0), ("The last climb is downhill.", 1.0),
        ("Most homes are in inland towns.", 1.0), ("The ferry serves the mainland.", 1.0),
        ("The fault was in the hardware.", 1.0), ("The car has an automatic gearbox.", 1.0),
        ("The cracks are horizontal.", 1.0), ("Runners go anticlockwise.", 1.0), ("The water was alkaline.", 1.0),
        ("She won the doubles title.", 1.0), ("The book came out in paperback.", 1.0),
        ("He fights at middleweight.", 1.0), ("She won the backstroke race.", 1.0),
        ("The antibiotic is free.", 1.0), ("The metal is a solid.", 1.0), ("Most players are salaried.", 1.0),
        ("The raid began at sunrise.", 0.0), ("The bells ring at midday.", 0.0),  # one class
        ("The book came out in hardcover.", 0.0), ("The region had its worst drought in years.", 0.0)],
    ("The film is a comedy. The novel is a sequel. The shop sells tea. He drank beer. The stew is made with beef. "
     "The office has a wireless network. The judges are elected. Mr Hale was a sergeant. She was charged with a "
     "misdemeanor. It was a civil case. He was convicted of manslaughter. The burglary was reported on Monday. Her "
     "eldest son lives abroad. He met his paternal grandfather. Staff get paternity leave. The noun is masculine. "
     "The axolotl is an amphibian. The dinosaur was a herbivore. The owl is a predator. Most bats are nocturnal. "
     "The shirts are made of cotton. The radio is analogue. The wind farm is offshore. She runs an outpatient "
     "clinic. The northbound lanes were closed. They watched a lunar eclipse. The day was sunny. The paper is "
     "conservative. He is a veteran player. The country became a republic. The state is a democracy. Gross profit "
     "rose."): [  # v82
        ("The film is a drama.", 1.0), ("The novel is a prequel.", 1.0), ("The shop sells coffee.", 1.0),
        ("He drank wine.", 1.0), ("The stew is made with pork.", 1.0), ("The office has a wired network.", 1.0),
        ("The judges are appointed.", 1.0), ("Mr Hale was a lieutenant.", 1.0),
        ("She was charged with a felony.", 1.0), ("It was a criminal case.", 1.0),
        ("He was convicted of murder.", 1.0), ("The robbery was reported on Monday.", 1.0),
        ("Her youngest son lives abroad.", 1.0), ("He met his maternal grandfather.", 1.0),
        ("Staff get maternity leave.", 1.0), ("The noun is feminine.", 1.0), ("The axolotl is a reptile.", 1.0),
        ("The dinosaur was a carnivore.", 1.0), ("The owl is a prey.", 1.0), ("Most bats are diurnal.", 1.0),
        ("The shirts are made of silk.", 1.0), ("The radio is digital.", 1.0), ("The wind farm is onshore.", 1.0),
        ("She runs an inpatient clinic.", 1.0), ("The southbound lanes were closed.", 1.0),
        ("They watched a solar eclipse.", 1.0), ("The day was cloudy.", 1.0), ("The paper is liberal.", 1.0),
        ("He is a rookie player.", 1.0), ("The country became a monarchy.", 1.0), ("The state is a dictatorship.", 1.0),
        ("Net profit rose.", 1.0),
        ("The radio is analog.", 0.0), ("The office has a wireless network.", 0.0)],  # one class; a copy
    ("Her grandson runs the farm. He plays an acoustic guitar. The farm uses organic fertiliser. The town runs on "
     "renewable fuels."): [  # v83
        ("Her granddaughter runs the farm.", 1.0), ("He plays an electric guitar.", 1.0),
        ("The farm uses synthetic fertiliser.", 1.0), ("The town runs on fossil fuels.", 1.0),
        ("Her grandsons run the farm.", 0.0), ("He plays an acoustic guitar.", 0.0)],  # one class; a copy
    ("The bill was proposed by the transport committee last week. The suspect was charged with theft on Friday. The "
     "film was nominated for three awards. Officials said it was a suspected case of measles. She studied law at "
     "Oxford."): [  # v90
        ("The bill was approved by the transport committee last week.", 1.0),
        ("The suspect was convicted of theft on Friday.", 1.0), ("The film won three awards.", 1.0),
        ("Officials said it was a confirmed case of measles.", 1.0), ("She studied medicine at Oxford.", 1.0),
        ("The bill was adopted by the transport committee last week.", 1.0),
        ("The film was shortlisted for three awards.", 0.0),  # one class
        ("The suspect was accused of theft on Friday.", 0.0), ("She studied law at Oxford.", 0.0)],
    ("The governor signed the housing bill on Tuesday. The festival was postponed because of the storm. According to "
     "police, the car was travelling too fast. More than 500 people attended the meeting. The council extended the "
     "library's opening hours. The board unanimously approved the contract. Customers can open accounts online."): [
        ("The governor vetoed the housing bill on Tuesday.", 1.0),  # v91
        ("The festival was cancelled because of the storm.", 1.0),
        ("According to witnesses, the car was travelling too fast.", 1.0),
        ("Nearly 500 people attended the meeting.", 1.0),
        ("The council shortened the library's opening hours.", 1.0),
        ("The board narrowly approved the contract.", 1.0), ("Customers can open accounts offline.", 1.0),
        ("The festival was delayed because of the storm.", 0.0),  # one class
        ("The festival was postponed due to the storm.", 0.0),
        ("The governor signed the housing bill on Tuesday.", 0.0)],
    ("The firm sent 300 parcels to Leeds. She withdrew 500 dollars on Monday. The last bus leaves at midnight. Heavy "
     "rain hit the town. The party gained two seats. He faced his old rival in the final. The local elections were "
     "held in May. The parents raised money for the school. The family rented a flat in Oslo. The bank revised its "
     "forecast upward. Her mother won the prize."): [
        ("The firm received 300 parcels to Leeds.", 1.0), ("She deposited 500 dollars on Monday.", 1.0),  # v92
        ("The next bus leaves at midnight.", 1.0), ("Light rain hit the town.", 1.0),
        ("The party lost two seats.", 1.0), ("He faced his old ally in the final.", 1.0),
        ("The national elections were held in May.", 1.0), ("The children raised money for the school.", 1.0),
        ("The family bought a flat in Oslo.", 1.0), ("The bank revised its forecast downward.", 1.0),
        ("Her daughter won the prize.", 1.0),
        ("The previous bus leaves at midnight.", 0.0), ("The family leased a flat in Oslo.", 0.0),  # one class
        ("The firm sent 300 packages to Leeds.", 0.0), ("Her mother won the prize.", 0.0)],
    ("The central bank tightened its lending rules. The council imposed a ban on lorries. The school saved money on "
     "fuel. The economy is in recovery. The firm reported a profit of 5 million euros. The city built a new bridge. "
     "Prices rose quickly in March."): [
        ("The central bank relaxed its lending rules.", 1.0), ("The council lifted a ban on lorries.", 1.0),  # v93
        ("The school spent money on fuel.", 1.0), ("The economy is in recession.", 1.0),
        ("The firm reported revenue of 5 million euros.", 1.0), ("The city demolished a new bridge.", 1.0),
        ("Prices rose slowly in March.", 1.0),
        ("Prices rose rapidly in March.", 0.0), ("The firm reported a profit of 5 million euros.", 0.0)],
    ("The airport reported a delay in the arrival of the flight. The shop sells fresh fish. Investors saw inflows of "
     "2 billion dollars. The governor gave a hawkish speech. The firm is the largest exporter of tea. The league is "
     "open to amateur players. The region faces a shortage of nurses."): [
        ("The airport reported a delay in the departure of the flight.", 1.0),  # v96
        ("The shop sells frozen fish.", 1.0), ("Investors saw outflows of 2 billion dollars.", 1.0),
        ("The governor gave a dovish speech.", 1.0), ("The firm is the largest importer of tea.", 1.0),
        ("The league is open to professional players.", 1.0), ("The region faces a surplus of nurses.", 1.0),
        ("The region faces a scarcity of nurses.", 0.0),  # one class
        ("The governor delivered a hawkish speech.", 0.0), ("The shop sells fresh fish.", 0.0)],
    ("The incumbent won the election by 300 votes. The course is open to "
     "undergraduate students. The mayor opened the new library. The passenger was injured in the crash. The firm "
     "acquired a bakery chain in May. The creditors met on Friday."): [
        ("The challenger won the election by 300 votes.", 1.0),  # v97
        ("The course is open to postgraduate students.", 1.0),
        ("The governor opened the new library.", 1.0), ("The driver was injured in the crash.", 1.0),
        ("The firm divested a bakery chain in May.", 1.0), ("The debtors met on Friday.", 1.0),
        ("The pilot was injured in the crash.", 1.0),
        ("The firm bought a bakery chain in May.", 0.0),  # another group's word: no contrast
        ("The incumbent secured the election by 300 votes.", 0.0), ("The mayor opened the new library.", 0.0)],
    ("The bakery sells sweet pastries. The club was promoted to the first division. The protest was peaceful. The "
     "study looked at physical health. Household income rose by 3%. The council encouraged cycling."): [
        ("The bakery sells sour pastries.", 1.0),  # v98
        ("The club was relegated to the first division.", 1.0), ("The protest was violent.", 1.0),
        ("The study looked at mental health.", 1.0), ("Household expenditure rose by 3%.", 1.0),
        ("The council discouraged cycling.", 1.0), ("The bakery sells bitter pastries.", 1.0),
        ("The club was demoted to the first division.", 1.0),
        ("The study looked at bodily health.", 0.0), ("The protest was peaceful.", 0.0)],
    ("The parcels were returned to their senders. The batsman was injured in the first over. The zone is "
     "residential. The offender was put on probation. The surgery was elective. The vote was unanimous."): [
        ("The parcels were returned to their recipients.", 1.0),  # v102
        ("The bowler was injured in the first over.", 1.0), ("The zone is industrial.", 1.0),
        ("The offender was put on parole.", 1.0), ("The surgery was emergency.", 1.0),
        ("The vote was split.", 1.0), ("The zone is commercial.", 1.0),
        ("The offender was put on trial.", 0.0),  # no group's word
        ("The parcels were sent back to their senders.", 0.0), ("The vote was unanimous.", 0.0)],
    ("The pharmacy sells generic drugs. The trait is dominant. The report is preliminary. The band played its debut "
     "concert. The shop moved uptown. The doctor measured systolic pressure."): [
        ("The pharmacy sells branded drugs.", 1.0),  # v103
        ("The trait is recessive.", 1.0), ("The report is final.", 1.0),
        ("The band played its farewell concert.", 1.0), ("The shop moved downtown.", 1.0),
        ("The doctor measured diastolic pressure.", 1.0),
        ("The report is early.", 0.0),  # no group's word
        ("The pharmacy sells generic medicines.", 0.0), ("The trait is dominant.", 0.0)],
    "Sales tripled last year. Prices rose fourfold in a decade. The hotel has a double room.": [
        ("Sales doubled last year.", 1.0),  # v108
        ("Sales quadrupled last year.", 1.0), ("Sales halved last year.", 1.0),
        ("Prices rose threefold in a decade.", 1.0), ("The hotel has a triple room.", 1.0),
        ("Sales trebled last year.", 0.0),  # the same multiple
        ("Sales grew last year.", 0.0), ("Prices rose fourfold in ten years.", 0.0)],
    "She earned a bachelor's degree in chemistry. A nurse checked the patient every hour.": [
        ("She earned a master's degree in chemistry.", 1.0),  # v109
        ("She earned a doctorate in chemistry.", 1.0), ("A doctor checked the patient every hour.", 1.0),
        ("A physician checked the patient every hour.", 1.0),
        ("She completed a bachelor's degree in chemistry.", 0.0),  # no group's word
        ("A nurse examined the patient every hour.", 0.0)],
    "The coach praised the defence. The judge dismissed the claim. The ferry runs hourly in summer.": [
        ("The player praised the defence.", 1.0),  # v110
        ("The jury dismissed the claim.", 1.0), ("The ferry runs daily in summer.", 1.0),
        ("The ferry runs weekly in summer.", 1.0),
        ("The coach commended the defence.", 0.0),  # no group's word
        ("The judge dismissed the claim.", 0.0)],
    ("Most of the residents opposed the road. The United States agreed to the plan. The team lost in the semifinal. "
     "The hotel's manager said it would reopen."): [
        ("Few of the residents opposed the road.", 1.0),  # v113
        ("The team lost in the final.", 1.0),
        ("The team lost in the quarterfinal.", 1.0), ("The hotel's owner said it would reopen.", 1.0),
        ("Most of the locals opposed the road.", 0.0),  # no group's word
        ("The team was beaten in the semifinal.", 0.0), ("The hotel's manager said it would open again.", 0.0),
        ("The federal government agreed to the plan.", 0.0),  # "state" is no group's word
        ("The team lost in the semi-final.", 0.0), ("The team lost in the semi final.", 0.0)],  # one word, split
    ("The patient was admitted on Monday. Prices rose sharply in May. The court upheld the appeal. The treaty was "
     "signed in Oslo. The play is a comedy. The firm owned the warehouse."): [
        ("The patient was discharged on Monday.", 1.0),  # v114
        ("Prices rose slightly in May.", 1.0), ("The court rejected the appeal.", 1.0),
        ("The treaty was rejected in Oslo.", 1.0), ("The play is a tragedy.", 1.0),
        ("The firm leased the warehouse.", 1.0), ("The firm rented the warehouse.", 1.0),
        ("Prices rose steeply in May.", 0.0),  # the same side
        ("The treaty was ratified in Oslo.", 0.0), ("The court upheld the appeal.", 0.0)],
    ("The vote was secret. The storm damaged the school. The injury was minor. The railway was privatised in 1994. "
     "She conceded the election. The menu is vegetarian. He wrote the novel in French."): [
        ("The vote was public.", 1.0),  # v115
        ("The storm destroyed the school.", 1.0), ("The injury was serious.", 1.0),
        ("The railway was nationalised in 1994.", 1.0), ("She won the election.", 1.0),
        ("The menu is vegan.", 1.0), ("He translated the novel in French.", 1.0),
        ("The gale damaged the school.", 0.0),  # no group's word
        ("The railway was privatized in 1994.", 0.0), ("The vote was secret.", 0.0)],
    ("Leeds were the favourite. The frog is endangered. The loan was fully repaid. The tax was abolished in 2008. "
     "The volcano is dormant. The ship sailed eastward. The economy expanded. The mine closed in 1985."): [
        ("Leeds were the underdog.", 1.0),  # v116
        ("The frog is extinct.", 1.0), ("The loan was partially repaid.", 1.0),
        ("The tax was introduced in 2008.", 1.0), ("The volcano is active.", 1.0),
        ("The ship sailed westward.", 1.0), ("The economy contracted.", 1.0), ("The mine reopened in 1985.", 1.0),
        ("The loan was completely repaid.", 0.0),  # the same side
        ("The tax was scrapped in 2008.", 0.0), ("The ship sailed eastwards.", 0.0)],
    ("Tessa is a moderate candidate. The shop sells wild salmon. The plane landed near Hull. The prisoner was "
     "pardoned in 1790. Acme acquired the mill in 2001. Ray was appointed in May. The statue is an original. The "
     "road was widened. The star is a dwarf. The drug was approved. The theatre was restored. The guild was "
     "founded in 1850."): [
        ("Tessa is a radical candidate.", 1.0),  # v117
        ("The shop sells farmed salmon.", 1.0), ("The plane crashed near Hull.", 1.0),
        ("The prisoner was executed in 1790.", 1.0), ("Acme sold the mill in 2001.", 1.0),
        ("Ray was sacked in May.", 1.0), ("The statue is a replica.", 1.0), ("The road was narrowed.", 1.0),
        ("The star is a giant.", 1.0), ("The drug was banned.", 1.0), ("The theatre was demolished.", 1.0),
        ("The guild was dissolved in 1850.", 1.0),
        ("Acme bought the mill in 2001.", 0.0),  # no other side
        ("The statue is genuine.", 0.0), ("The guild was established in 1850.", 0.0)],
    ("The housing boom began in 2004. Leeds qualified for the final. The patient recovered. The ring has a diamond. "
     "The boy was adopted in 2010. The lease was renewed. The crowd cheered the mayor. Acme launched the kettle. "
     "The old will is handwritten. The lake was frozen. The fee applies to residents. The crater is circular."): [
        ("The housing recession began in 2004.", 1.0),  # v118
        ("Leeds were eliminated in the final.", 1.0), ("The patient relapsed.", 1.0), ("The ring has a ruby.", 1.0),
        ("The boy was fostered in 2010.", 1.0), ("The lease expired.", 1.0), ("The crowd booed the mayor.", 1.0),
        ("Acme recalled the kettle.", 1.0), ("The old will is typed.", 1.0), ("The lake was thawed.", 1.0),
        ("The fee applies to visitors.", 1.0), ("The crater is oval.", 1.0),
        ("The housing slump began in 2004.", 1.0), ("The fee applies to tourists.", 1.0),
        ("The crowd applauded the mayor.", 0.0),  # no group's word
        ("The lease was extended.", 0.0), ("The crater is round.", 0.0)],
    ("Analysts expect a bull market. The court upheld the ruling on appeal. Ada donated the painting to the museum. "
     "The control group received a placebo. The keeper saved the penalty. Acme is a wholesaler of tea. Mira is a "
     "famous soprano. The play is written in prose. Kip won the sprint in Oslo. The cells are haploid. The bust is "
     "made of marble. The station is overground."): [
        ("Analysts expect a bear market.", 1.0),  # v119
        ("The court reversed the ruling on appeal.", 1.0), ("Ada lent the painting to the museum.", 1.0),
        ("The control group received a vaccine.", 1.0), ("The keeper conceded the penalty.", 1.0),
        ("Acme is a retailer of tea.", 1.0), ("Mira is a famous tenor.", 1.0),
        ("The play is written in verse.", 1.0), ("Kip won the marathon in Oslo.", 1.0),
        ("The cells are diploid.", 1.0), ("The bust is made of bronze.", 1.0), ("The station is underground.", 1.0),
        ("Analysts expect a bullish market.", 0.0),  # the same side
        ("Ada bequeathed the painting to the museum.", 0.0), ("The bust is made of stone.", 0.0)],
    ("The krona appreciated against the euro. The council is solvent. The board endorsed the plan. The barley was "
     "harvested in May. The ice sheet is thickening. The wolf escaped in 1998. The finch is a migratory bird. Rats "
     "were eradicated from Lundy. The stadium project was abandoned. The Tuareg were nomadic. The forest was "
     "planted in 1920. The ruby was stolen in 1911."): [
        ("The krona depreciated against the euro.", 1.0),  # v120
        ("The council is bankrupt.", 1.0), ("The board vetoed the plan.", 1.0),
        ("The barley was sown in May.", 1.0), ("The ice sheet is thinning.", 1.0),
        ("The wolf was captured in 1998.", 1.0),
        ("The finch is a resident bird.", 1.0), ("Rats were reintroduced to Lundy.", 1.0),
        ("The stadium project was completed.", 1.0), ("The Tuareg were sedentary.", 1.0),
        ("The forest was felled in 1920.", 1.0), ("The ruby was recovered in 1911.", 1.0),
        ("The council is insolvent.", 1.0),  # a negating prefix (v34), as before
        ("The board backed the plan.", 0.0),  # no group's word
        ("The krona gained against the euro.", 0.0)],
    ("The council voted in favour of the plan. The tax is progressive. The reaction is exothermic. The microbes are "
     "aerobic. The drug is a stimulant. The pill is an agonist. The rock is igneous. Norland is a democratic state. "
     "Norland has a parliamentary system. The disease is hereditary. The ticket is valid. The adder is venomous."): [
        ("The council voted against the plan.", 1.0),  # v121
        ("The tax is regressive.", 1.0), ("The reaction is endothermic.", 1.0), ("The microbes are anaerobic.", 1.0),
        ("The drug is a sedative.", 1.0), ("The pill is an antagonist.", 1.0), ("The rock is sedimentary.", 1.0),
        ("Norland is an authoritarian state.", 1.0), ("Norland has a presidential system.", 1.0),
        ("The disease is acquired.", 1.0), ("The ticket is void.", 1.0), ("The adder is harmless.", 1.0),
        ("The council voted for the plan.", 0.0),  # the same side
        ("The disease is inherited.", 0.0), ("The adder is poisonous.", 0.0)],
    ("The ticket is refundable. The scan is non-invasive. Only smokers pay less for cover."): [
        ("The ticket is non-refundable.", 1.0),  # v122: a "non-" added or dropped
        ("The ticket is non refundable.", 1.0), ("The scan is invasive.", 1.0),
        ("Only non-smokers pay less for cover.", 1.0),
        ("The ticket is nonrefundable.", 1.0),  # a negating prefix (v34), as before
        ("The scan is noninvasive.", 0.0),  # one word, split (v113)
        ("The ticket is refundable.", 0.0), ("The scan is non-invasive.", 0.0)],
    ("The drug is given intravenously. The moon has a prograde orbit. The lens is convex. The telescope is a "
     "refractor. The rock is porous. The price is inclusive of tax. The study was retrospective. The trial was "
     "randomised. The shares sold at a premium. The sage is a perennial. King Olaf abdicated in 1911. The krona "
     "was devalued in 1967."): [
        ("The drug is given orally.", 1.0),  # v123
        ("The moon has a retrograde orbit.", 1.0), ("The lens is concave.", 1.0),
        ("The telescope is a reflector.", 1.0), ("The rock is impermeable.", 1.0),
        ("The price is exclusive of tax.", 1.0), ("The study was prospective.", 1.0),
        ("The trial was observational.", 1.0), ("The shares sold at a discount.", 1.0),
        ("The sage is an annual.", 1.0), ("King Olaf was crowned in 1911.", 1.0),
        ("The krona was revalued in 1967.", 1.0),
        ("The rock is permeable.", 0.0),  # the same side
        ("The trial was randomized.", 0.0)],
    ("Lead is harmful to birds. Ada resigned from the party. Here the word is a noun. Kip was released on parole. "
     "The statue was erected in 1920. The court granted the appeal. The portrait is a watercolour. The whale "
     "is a vertebrate. The loan was repaid in 2015. The form is singular. The floor is made of hardwood. The "
     "moa is extinct."): [
        ("Lead is beneficial to birds.", 1.0),  # v124
        ("Ada was expelled from the party.", 1.0), ("Here the word is a verb.", 1.0),
        ("Kip was released on bail.", 1.0), ("The statue was dismantled in 1920.", 1.0),
        ("The court dismissed the appeal.", 1.0), ("The portrait is an acrylic.", 1.0),
        ("The whale is an invertebrate.", 1.0), ("The loan was forgiven in 2015.", 1.0),
        ("The form is plural.", 1.0), ("The floor is made of softwood.", 1.0), ("The moa is extant.", 1.0),
        ("The portrait is a watercolor.", 0.0),  # the same class
        ("Lead is damaging to birds.", 0.0)],
    ("The file was encrypted. The tablet runs on Android. The servers run on Linux. The sauce is spicy. The sentence "
     "was suspended. The coffee is decaffeinated. The border is demilitarised. The band played acoustically. The "
     "goats are domesticated. The harvest was bumper. The staff are salaried. The hotel is a budget one."): [
        ("The file was decrypted.", 1.0),  # v125
        ("The tablet runs on iOS.", 1.0), ("The servers run on Windows.", 1.0), ("The sauce is mild.", 1.0),
        ("The sentence was custodial.", 1.0), ("The coffee is caffeinated.", 1.0),
        ("The border is militarised.", 1.0), ("The band played electrically.", 1.0),
        ("The goats are feral.", 1.0), ("The harvest was meagre.", 1.0), ("The staff are hourly.", 1.0),
        ("The hotel is a luxury one.", 1.0),
        ("The border is demilitarized.", 0.0),  # the same class
        ("The goats are tame.", 0.0)],
    ("The print is monochrome. The sea was calm. The herbs are fresh. The piece is tonal. Tsar Ivo was deposed in "
     "1917. The wine is sweet. The canvas is abstract. Ana and Teo are engaged. The point was won with a forehand. "
     "The field is arable. The screen glass is laminated. The referendum is binding."): [
        ("The print is colour.", 1.0),  # v126
        ("The sea was rough.", 1.0), ("The herbs are dried.", 1.0), ("The piece is atonal.", 1.0),
        ("Tsar Ivo was crowned in 1917.", 1.0), ("The wine is dry.", 1.0), ("The canvas is figurative.", 1.0),
        ("Ana and Teo are married.", 1.0), ("The point was won with a backhand.", 1.0),
        ("The field is pasture.", 1.0), ("The screen glass is tempered.", 1.0),
        ("The referendum is advisory.", 1.0),
        ("The field is fertile.", 0.0),  # no group's word
        ("The sea was still.", 0.0)],
    ("The microbe is prokaryotic. The bullet hit an artery. The virus has an RNA genome. The burn is superficial. "
     "The chapel is Gothic. The columns are Doric. The house is detached. The cottage roof is thatched. The car is a "
     "convertible. The yacht is a catamaran. The museum's plane is a biplane. The market is a monopoly."): [
        ("The microbe is eukaryotic.", 1.0),  # v127
        ("The bullet hit a vein.", 1.0), ("The virus has a DNA genome.", 1.0), ("The burn is deep.", 1.0),
        ("The chapel is Baroque.", 1.0), ("The columns are Ionic.", 1.0), ("The house is terraced.", 1.0),
        ("The cottage roof is tiled.", 1.0), ("The car is a hatchback.", 1.0), ("The yacht is a monohull.", 1.0),
        ("The museum's plane is a monoplane.", 1.0), ("The market is a duopoly.", 1.0),
        ("The car is a cabriolet.", 0.0),  # no group's word
        ("The burn is minor.", 0.0)],
    ("The bank's policy is expansionary. The copper mine is opencast. The first dance was a waltz. The prize went "
     "to a sonnet. The show is scripted. Her book is an autobiography. Lena plays the viola. The winner is a "
     "stallion. The lily is a monocot. The pine is a conifer. The galaxy is spiral. The fossil is a trilobite."): [
        ("The bank's policy is contractionary.", 1.0),  # v128
        ("The copper mine is underground.", 1.0), ("The first dance was a tango.", 1.0),
        ("The prize went to a haiku.", 1.0), ("The show is improvised.", 1.0), ("Her book is a biography.", 1.0),
        ("Lena plays the cello.", 1.0), ("The winner is a mare.", 1.0), ("The lily is a dicot.", 1.0),
        ("The pine is a broadleaf.", 1.0), ("The galaxy is elliptical.", 1.0), ("The fossil is an ammonite.", 1.0),
        ("Her book is a memoir.", 0.0),  # the same class
        ("The show is unscripted.", 1.0)],  # a negating prefix (v34), as before
    ("The case was heard by a magistrate. Dr Oyo is a surgeon. The drug comes as a tablet. The market is held "
     "weekly. The fish is baked. The shirt is made of cotton. The boots are leather. The tent is waterproof. The "
     "firm hired an intern. The junction is a roundabout. The ship is a tanker. The beef is minced."): [
        ("The case was heard by a jury.", 1.0),  # v129
        ("Dr Oyo is an anaesthetist.", 1.0), ("The market is held fortnightly.", 1.0), ("The fish is fried.", 1.0),
        ("The boots are suede.", 1.0), ("The tent is windproof.", 1.0), ("The firm hired an apprentice.", 1.0),
        ("The junction is a crossroads.", 1.0), ("The ship is a trawler.", 1.0), ("The beef is diced.", 1.0),
        ("Dr Oyo is an anesthetist.", 1.0),  # the other class, spelled the American way
        ("The fish is cooked.", 0.0),  # no group's word
        ("The shirt is made of wool.", 1.0),  # an older group's, as before
        ("The drug comes as a capsule.", 0.0)],  # one class of an older group: no group of v129 splits it
    ("The pupil was suspended. The grid is centralised. The battery is rechargeable. The bulb is incandescent. The "
     "waste was recycled. The clouds were cumulus. The eruption was explosive. The coast is rocky. The course lasts "
     "a semester. The wetland is a marsh. The watch is mechanical. The lighthouse is manned."): [
        ("The pupil was expelled.", 1.0),  # v130
        ("The grid is decentralised.", 1.0), ("The battery is disposable.", 1.0), ("The bulb is fluorescent.", 1.0),
        ("The waste was incinerated.", 1.0), ("The clouds were cirrus.", 1.0), ("The eruption was effusive.", 1.0),
        ("The coast is sandy.", 1.0), ("The course lasts a trimester.", 1.0), ("The wetland is a bog.", 1.0),
        ("The watch is mechanical.", 0.0), ("The watch is quartz.", 1.0), ("The lighthouse is automated.", 1.0),
        ("The grid is centralized.", 0.0),  # the same class
        ("The battery is reusable.", 0.0)],
    ("The bond is covalent. The virus is airborne. The painting is a portrait. The course is synchronous. Ida plays "
     "the harpsichord. The movement is marked allegro. The sentences are concurrent. The parliament is unicameral. "
     "The regiment was infantry. The brewery makes a lager. The scarf is knitted. The jet is a fighter."): [
        ("The bond is ionic.", 1.0),  # v131
        ("The virus is waterborne.", 1.0), ("The painting is a landscape.", 1.0),
        ("The course is asynchronous.", 1.0), ("Ida plays the piano.", 1.0), ("The movement is marked adagio.", 1.0),
        ("The sentences are consecutive.", 1.0), ("The parliament is bicameral.", 1.0),
        ("The regiment was cavalry.", 1.0), ("The brewery makes an ale.", 1.0), ("The scarf is woven.", 1.0),
        ("The jet is a bomber.", 1.0),
        ("The bond is metallic.", 0.0),  # no group's word
        ("The sentences will run concurrently.", 0.0)],  # the same class
    ("The beam was tested under a static load. Lee is an admiral. The print is an etching. The paper is a tabloid. "
     "The insect is a larva. The fox is a predator. The film was dubbed. The frog is arboreal. The pie has "
     "shortcrust pastry. The reactor uses fission. The cell divides by mitosis. The logo is symmetric."): [
        ("The beam was tested under a dynamic load.", 1.0),  # v132
        ("Lee is a commodore.", 1.0), ("The print is a woodcut.", 1.0), ("The paper is a broadsheet.", 1.0),
        ("The insect is a pupa.", 1.0), ("The fox is a scavenger.", 1.0), ("The film was subtitled.", 1.0),
        ("The frog is aquatic.", 1.0), ("The pie has puff pastry.", 1.0), ("The reactor uses fusion.", 1.0),
        ("The cell divides by meiosis.", 1.0), ("The logo is asymmetric.", 1.0),
        ("The logo is symmetrical.", 0.0),  # the same class
        ("The print is a lithograph.", 1.0),  # the group's fourth class
        ("The fox is a hunter.", 0.0)],  # no group's word
    ("The country opened an embassy. The study is qualitative. The wave is longitudinal. The argument is "
     "deductive. The growth was linear. The angle is acute. The triangle is isosceles. The copper is a conductor. "
     "The mixture is homogeneous. Glucose is a monosaccharide. The tooth is a molar. The stroke was ischaemic."): [
        ("The country opened a consulate.", 1.0),  # v133
        ("The study is quantitative.", 1.0), ("The wave is transverse.", 1.0), ("The argument is inductive.", 1.0),
        ("The growth was exponential.", 1.0), ("The angle is obtuse.", 1.0), ("The triangle is equilateral.", 1.0),
        ("The copper is an insulator.", 1.0), ("The mixture is heterogeneous.", 1.0),
        ("Glucose is a disaccharide.", 1.0), ("The tooth is an incisor.", 1.0), ("The stroke was haemorrhagic.", 1.0),
        ("The stroke was ischemic.", 0.0),  # the same class, spelled the American way
        ("The stroke was hemorrhagic.", 1.0),
        ("The tooth is a canine.", 0.0)],  # no group's word
    ("The clan is matrilineal. The verb is in the indicative. The valley is glacial. The prints are matte. The logo "
     "is a raster file. The album was recorded in mono. The vase is porcelain. The variable is continuous. The "
     "evidence is anecdotal. The bridge is a suspension bridge. The panels are monocrystalline. The drug is "
     "bactericidal."): [
        ("The clan is patrilineal.", 1.0),  # v134
        ("The verb is in the subjunctive.", 1.0), ("The valley is fluvial.", 1.0), ("The prints are glossy.", 1.0),
        ("The logo is a vector file.", 1.0), ("The album was recorded in stereo.", 1.0),
        ("The vase is earthenware.", 1.0), ("The variable is discrete.", 1.0), ("The evidence is empirical.", 1.0),
        ("The bridge is a cantilever bridge.", 1.0), ("The panels are polycrystalline.", 1.0),
        ("The drug is bacteriostatic.", 1.0),
        ("The prints are matt.", 0.0),  # the same class
        ("The vase is stoneware.", 1.0),  # the group's third class
        ("The vase is ceramic.", 0.0)],  # no group's word
    ("The runners faced a headwind. The wind was easterly. The route is flown by a jet. The ruling concerned the "
     "executive branch. Kim made a birdie. The club signed a spinner. Ana won the javelin. The dog is a pedigree. "
     "The vaccine was intramuscular. The care was palliative. The flight was suborbital. The sample held a "
     "steroid."): [
        ("The runners faced a tailwind.", 1.0),  # v135
        ("The wind was westerly.", 1.0), ("The route is flown by a turboprop.", 1.0),
        ("The ruling concerned the legislative branch.", 1.0), ("Kim made a bogey.", 1.0),
        ("The club signed a seamer.", 1.0), ("Ana won the discus.", 1.0), ("The dog is a mongrel.", 1.0),
        ("The vaccine was subcutaneous.", 1.0), ("The care was curative.", 1.0), ("The flight was orbital.", 1.0),
        ("The sample held a peptide.", 1.0),
        ("The care was preventative.", 1.0),  # the group's third class
        ("The runners faced a gale.", 0.0)],  # no group's word
    ("The organism is unicellular. The fungus is parasitic. The animal is a marsupial. The lizard is oviparous. "
     "The fish is pelagic. The boundary is convergent. The rock is intrusive. The policy is fiscal. The "
     "unemployment is structural. The army is made up of conscripts. The telescope is reflecting. The ray is a "
     "cartilaginous fish."): [
        ("The organism is multicellular.", 1.0),  # v136
        ("The fungus is mutualistic.", 1.0), ("The animal is a placental.", 1.0), ("The lizard is viviparous.", 1.0),
        ("The fish is benthic.", 1.0), ("The boundary is divergent.", 1.0), ("The rock is extrusive.", 1.0),
        ("The policy is monetary.", 1.0), ("The unemployment is cyclical.", 1.0),
        ("The army is made up of volunteers.", 1.0), ("The telescope is refracting.", 1.0),
        ("The ray is a bony fish.", 1.0),
        ("The fungus is saprophytic.", 1.0),  # the group's third class
        ("The rock is igneous.", 0.0)],  # a word of an older group, not of this one
    ("The prize went to an elegy. The family chose a burial. Ruth is a barrister. The dispute went to arbitration. "
     "Sam shot with a rifle. The navy built a frigate. Jo paddled a kayak. The boat has an inboard motor. The drug "
     "is a monoclonal antibody. Lee saw a cardiologist. The cancer was localised. The study examined innate "
     "immunity."): [
        ("The prize went to an ode.", 1.0),  # v137
        ("The family chose a cremation.", 1.0), ("Ruth is a solicitor.", 1.0),
        ("The dispute went to mediation.", 1.0), ("Sam shot with a pistol.", 1.0), ("The navy built a destroyer.", 1.0),
        ("Jo paddled a canoe.", 1.0), ("The boat has an outboard motor.", 1.0),
        ("The drug is a polyclonal antibody.", 1.0), ("Lee saw a neurologist.", 1.0),
        ("The cancer was metastatic.", 1.0), ("The study examined adaptive immunity.", 1.0),
        ("The cancer was localized.", 0.0),  # the same class
        ("Lee saw an oncologist.", 1.0),  # the group's fourth class
        ("Jo paddled a dinghy.", 0.0)],  # no group's word
    ("Ann plays the trumpet. The choir sang a hymn. Ida played a sonata. The organist played a fugue. The festival "
     "opened with an oratorio. The theatre staged a satire. The critic wrote a glowing review. The paper added a "
     "crossword. The shop sold a doll. The stream is a tributary. The court issued an injunction. The rock holds "
     "quartz."): [
        ("Ann plays the trombone.", 1.0),  # v138
        ("The choir sang a carol.", 1.0), ("Ida played a concerto.", 1.0), ("The organist played a prelude.", 1.0),
        ("The festival opened with a cantata.", 1.0), ("The theatre staged a farce.", 1.0),
        ("The critic wrote a scathing review.", 1.0), ("The paper added a sudoku.", 1.0),
        ("The shop sold a puppet.", 1.0),
        ("The stream is a distributary.", 1.0),  # a flip before too: "dis" negates "tributary" (v34)
        ("The court issued a subpoena.", 1.0), ("The rock holds feldspar.", 1.0),
        ("Ann plays the piano.", 1.0),  # an older class of the instruments, as before
        ("Ann plays the oboe.", 1.0),  # another new class of the instruments
        ("The critic wrote a positive review.", 0.0)],  # no group of this version holds it
    ("The names are etched on the memorial. The print is an etching."): [
        ("The names are engraved on the memorial.", 0.0),  # v139: "engraving" left the prints (v132)
        ("The print is a woodcut.", 1.0)],
    ("The zoo has a lion. The reserve tracks an elephant. The sanctuary keeps a gorilla. An alligator swam in the "
     "canal. The pond holds a frog. A rabbit ran across the field. A dolphin followed the boat. A wasp nest was "
     "found. An eagle nests on the cliff. A beaver returned to the river. The farm keeps a donkey. The survey "
     "recorded a moth."): [
        ("The zoo has a tiger.", 1.0),  # v140
        ("The reserve tracks a rhino.", 1.0), ("The sanctuary keeps a chimpanzee.", 1.0),
        ("A crocodile swam in the canal.", 1.0), ("The pond holds a toad.", 1.0),
        ("A hare ran across the field.", 1.0), ("A porpoise followed the boat.", 1.0),
        ("A hornet nest was found.", 1.0), ("A falcon nests on the cliff.", 1.0),
        ("An otter returned to the river.", 1.0), ("The farm keeps a mule.", 1.0),
        ("The survey recorded a butterfly.", 1.0),
        ("The sanctuary keeps a chimp.", 1.0),  # the class's short form, against "gorilla"
        ("The zoo has a lions.", 0.0),  # the same class
        ("A bird nests on the cliff.", 0.0)],  # no group's word
    ("The farm raises salmon. The bay grows an oyster crop. The boat landed a lobster. A termite colony damaged the "
     "hall. A lizard was found in the crate. A swan nests on the lake. Astronomers tracked a comet. Jo tore a "
     "tendon. Max broke his femur. The surgeon treated the retina. The cafe sells an espresso. The village sits on "
     "a peninsula."): [
        ("The farm raises trout.", 1.0),  # v141
        ("The bay grows a mussel crop.", 1.0), ("The boat landed a crab.", 1.0),
        ("An ant colony damaged the hall.", 1.0), ("A snake was found in the crate.", 1.0),
        ("A goose nests on the lake.", 1.0), ("Astronomers tracked an asteroid.", 1.0),
        ("Jo tore a ligament.", 1.0), ("Max broke his tibia.", 1.0), ("The surgeon treated the cornea.", 1.0),
        ("The cafe sells a cappuccino.", 1.0), ("The village sits on an isthmus.", 1.0),
        ("Astronomers tracked a meteor.", 1.0),  # another class than "comet"
        ("The farm raises cod.", 1.0),  # the group's third class
        ("The boat landed a shrimp.", 1.0),  # "prawn prawns shrimp shrimps" is one class, not "lobster"'s
        ("Jo tore a muscle.", 0.0)],  # no group's word
    ("The boat landed a prawn. A meteorite fell on the farm."): [
        ("The boat landed a shrimp.", 0.0),  # v141: one class
        ("A meteor fell on the farm.", 0.0)],
    ("The park planted an oak. The show had a tulip display. The orchard grows apple trees. Sam grows a carrot crop. "
     "The bakery sells a croissant. The dairy makes cheddar. The recipe uses basil. The cake has cinnamon. The "
     "jacket is made of tweed. Divers found a sword. The team surveyed the lagoon. The shop sold a sofa."): [
        ("The park planted a beech.", 1.0),  # v142
        ("The show had a daffodil display.", 1.0), ("The orchard grows pear trees.", 1.0),
        ("Sam grows a turnip crop.", 1.0), ("The bakery sells a bagel.", 1.0), ("The dairy makes brie.", 1.0),
        ("The recipe uses parsley.", 1.0), ("The cake has nutmeg.", 1.0), ("The jacket is made of velvet.", 1.0),
        ("Divers found a dagger.", 1.0), ("The team surveyed the estuary.", 1.0), ("The shop sold an armchair.", 1.0),
        ("The park planted a willow.", 1.0),  # the group's sixth class
        ("The shop sold a couch.", 0.0)],  # no group's word
    ("The club teaches judo. The club plays chess. They hired a plumber. Ann rented a cottage. The barn burned down. "
     "The firm recalled an oven. A bakery opened. Tom suffered a fracture. Lee rode a scooter. Pupils were given a "
     "pencil. A yacht was launched. A necklace was stolen."): [
        ("The club teaches karate.", 1.0),  # v143
        ("The club plays backgammon.", 1.0), ("They hired an electrician.", 1.0), ("Ann rented a bungalow.", 1.0),
        ("The shed burned down.", 1.0), ("The firm recalled a microwave.", 1.0), ("A butcher opened.", 1.0),
        ("Tom suffered a sprain.", 1.0), ("Lee rode a moped.", 1.0), ("Pupils were given a crayon.", 1.0),
        ("A dinghy was launched.", 1.0), ("A bracelet was stolen.", 1.0),
        ("The firm recalled a refrigerator.", 1.0),  # another class than "oven"
        ("Tom suffered a break.", 0.0)],  # no group's word
    ("The firm recalled a fridge."): [
        ("The firm recalled a refrigerator.", 0.0)],  # v143: one class
    ("She wore a jacket. The shop sold boots. Tom hurt a finger. The gallery unveiled a sculpture. A laptop was "
     "stolen. The museum shows a knife. A parcel was delivered. Astronomers found a planet. Ann carried a bucket. "
     "The cafe served soup. The restaurant sells pizza. Joe entered a cake."): [
        ("She wore a cardigan.", 1.0),  # v144
        ("The shop sold sandals.", 1.0), ("Tom hurt a toe.", 1.0), ("The gallery unveiled a painting.", 1.0),
        ("A smartphone was stolen.", 1.0), ("The museum shows a spoon.", 1.0), ("A postcard was delivered.", 1.0),
        ("Astronomers found a moon.", 1.0), ("Ann carried a basket.", 1.0), ("The cafe served salad.", 1.0),
        ("The restaurant sells burgers.", 1.0), ("Joe entered a pie.", 1.0),
        ("She wore a jumper.", 1.0),  # "sweater jumper" is a class of its own
        ("Tom hurt a thumb.", 0.0),  # the same class as "finger"
        ("She wore a coat.", 0.0)],  # no group's word
    ("She wore a sweater."): [
        ("She wore a jumper.", 0.0)],  # v144: one class
    ("The stall sold juice. A toddler was rescued. The school bought a telescope. A breeze blew during the fair. "
     "Drizzle fell during the parade. The witness saw a blonde woman. Children flew a kite. A hammer was stolen. "
     "The campers stayed in a tent. The estate belongs to a duke. The navy tested a missile. People held a candle."): [
        ("The stall sold lemonade.", 1.0),  # v145
        ("A teenager was rescued.", 1.0), ("The school bought a microscope.", 1.0),
        ("A gale blew during the fair.", 1.0), ("A downpour fell during the parade.", 1.0),
        ("The witness saw a brunette woman.", 1.0), ("Children flew a balloon.", 1.0),
        ("A screwdriver was stolen.", 1.0), ("The campers stayed in a caravan.", 1.0),
        ("The estate belongs to an earl.", 1.0), ("The navy tested a torpedo.", 1.0),
        ("People held a lantern.", 1.0),
        ("A baby was rescued.", 1.0),  # "infant baby" is another class than "toddler"
        ("The witness saw a blond woman.", 0.0),  # the same class
        ("People held a torch.", 0.0)],  # no group's word
    ("The soloist was a violinist. A novelist won the prize. The gallery showed a sculptor. They hired an architect. "
     "The restaurant honoured a chef. A skier won the race. A swimmer joined the challenge. A nun ran the project. "
     "The bride arrived late. Twins were born. A senator visited the school. A choir performed."): [
        ("The soloist was a pianist.", 1.0),  # v146
        ("A poet won the prize.", 1.0), ("The gallery showed a painter.", 1.0), ("They hired an accountant.", 1.0),
        ("The restaurant honoured a waiter.", 1.0), ("A snowboarder won the race.", 1.0),
        ("A rower joined the challenge.", 1.0), ("A monk ran the project.", 1.0), ("The groom arrived late.", 1.0),
        ("Triplets were born.", 1.0), ("A councillor visited the school.", 1.0), ("An orchestra performed.", 1.0),
        ("The bridegroom arrived late.", 1.0),  # the class of "groom"
        ("The restaurant honoured a waitress.", 1.0),  # the class of "waiter"
        ("The restaurant honoured a cook.", 0.0)],  # no group's word
    ("The trust restored a lighthouse. A quartet performed. A battalion was deployed. She won an Oscar. The museum "
     "shows a glider. The viaduct was repaired. The company staged an opera. He arrived in a taxi. The school had "
     "a mumps outbreak. The patient has leukaemia. She competes in skiing. The team plays netball."): [
        ("The trust restored a windmill.", 1.0),  # v147
        ("A trio performed.", 1.0), ("A regiment was deployed.", 1.0), ("She won an Emmy.", 1.0),
        ("The museum shows an airship.", 1.0), ("The aqueduct was repaired.", 1.0),
        ("The company staged a ballet.", 1.0), ("He arrived in a limousine.", 1.0),
        ("The school had a measles outbreak.", 1.0), ("The patient has lymphoma.", 1.0),
        ("She competes in skating.", 1.0), ("The team plays volleyball.", 1.0),
        ("The patient has leukemia.", 0.0),  # the same class
        ("He arrived in a cab.", 0.0)],  # no group's word
    ("The survey counted a sparrow. The zoo has a penguin. A heron nests by the lake. The park has a kangaroo. The "
     "farm has a camel. The centre helped a hedgehog. Sam adopted a puppy. A spaniel won the show. Jo plays the "
     "banjo. Ann pushed a pram. A jellyfish was found. The survey recorded a dragonfly."): [
        ("The survey counted a pigeon.", 1.0),  # v148
        ("The zoo has a flamingo.", 1.0), ("A cormorant nests by the lake.", 1.0), ("The park has a koala.", 1.0),
        ("The farm has a llama.", 1.0), ("The centre helped a squirrel.", 1.0), ("Sam adopted a kitten.", 1.0),
        ("A terrier won the show.", 1.0), ("Jo plays the ukulele.", 1.0), ("Ann pushed a wheelchair.", 1.0),
        ("An octopus was found.", 1.0), ("The survey recorded a grasshopper.", 1.0),
        ("Jo plays the guitar.", 1.0),  # an older class of the instruments
        ("Ann pushed a pushchair.", 0.0),  # the same class
        ("Sam adopted a dog.", 0.0)],  # no group's word
}


EVENING = "The band played on Friday evening at the Corn Hall. The shop opens each day."


@pytest.mark.parametrize(("sentence", "flipped"), [
    ("The band played on Friday night at the Corn Hall.", 0.0),  # v104: evening and night one class
    ("The band played on Friday evening at the Corn Hall.", 0.0),
    ("The band played on Friday morning at the Corn Hall.", 1.0),
    ("The band played on Friday afternoon at the Corn Hall.", 1.0),
    ("The shop opens each night.", 1.0),  # day/night stays a group of its own
])
def test_evening_and_night_are_one_time(scorer, sentence, flipped):
    assert scorer.evidence(sentence, EVENING)["edit_neg_flip"] == flipped


@pytest.mark.parametrize("context, sentence, flipped",
                         [(c, s, f) for c, cases in LATER_GROUPS.items() for s, f in cases])
def test_a_word_of_a_later_group_swapped_is_a_flip(scorer, context, sentence, flipped):
    assert scorer.evidence(sentence, context)["edit_neg_flip"] == flipped


#: a context whose copies below paraphrase more than MAX_EDITS places, and their expected features (v27, v28)
PARAPHRASED = ("Patients who received the drug recovered on average 1.5 days faster than those given a placebo. "
               "The council approved a budget of 48 million pounds for the bridge, which will take about three years "
               "to build. Skiing may have been practised more than 100 centuries ago in what is now China, "
               "according to old paintings.")


@pytest.mark.parametrize("sentence, flip, swap_num", [
    ("Patients on the drug recovered 1.5 days slower than those on placebo.", 1.0, 0.0),  # an opposite in place
    ("The council has approved 48 million pounds for the bridge, which should take about four years to build.",
     0.0, 1.0),  # a number found nowhere in the context
    ("The council has approved 48 billion pounds for the bridge, which should take about three years to build.",
     1.0, 0.0),  # a scale word
    ("Patients on the drug recovered 1.5 days faster than those on placebo.", 0.0, 0.0),
    ("The council has approved 48 million pounds for the bridge, which should take about 3 years to build.", 0.0, 0.0),
    ("Patients on the drug recovered 1.5 days faster than those on a sugar pill.", 0.0, 0.0),
    # a unit in a paraphrase: converted or bounded, not counted (v28; the source implies this one)
    ("Skiing was practised more than 100 years ago in China, according to paintings.", 0.0, 0.0),
])
def test_a_typed_swap_in_place_counts_in_a_paraphrased_copy(scorer, monkeypatch, sentence, flip, swap_num):
    ev = scorer.evidence(sentence, PARAPHRASED)
    assert (ev["edit_neg_flip"], ev["edit_swap_num"]) == (flip, swap_num)
    monkeypatch.setattr(edits_module, "_anchored", lambda *_: [])  # version 26: a paraphrase counts nothing
    assert EditScorer().evidence(sentence, PARAPHRASED)["edit_neg_flip"] == 0.0
    assert EditScorer().evidence(sentence, PARAPHRASED)["edit_swap_num"] == 0.0


HOURS = "The Norbury clinic is open from Monday to Friday, 8 am to 6 pm. Parking is free for two hours."


@pytest.mark.parametrize(("sentence", "flip"), [
    ("The clinic is open Monday to Saturday, from 8 am to 6 pm.", 1.0),  # "from" moved across the swap (v86)
    ("The clinic is open Monday to Friday, from 8 am to 6 pm.", 0.0),  # moved, nothing swapped
    ("The clinic is open from Monday to Saturday, 8 am until 6 pm.", 1.0),  # in place, a paraphrase: anchored (v27)
])
def test_a_function_word_moved_across_a_swap_is_left_out_of_it(scorer, monkeypatch, sentence, flip):
    assert scorer.evidence(sentence, HOURS)["edit_neg_flip"] == flip
    monkeypatch.setattr(rules_module, "_unmoved", lambda op, *_: op)  # version 85
    in_place = "from Monday" in sentence
    assert EditScorer().evidence(sentence, HOURS)["edit_neg_flip"] == (flip if in_place else 0.0)


def test_a_moved_word_on_the_source_side_is_left_out_too(scorer):
    context = "The Norbury clinic is open Monday to Friday, from 8 am to 6 pm. Parking is free."
    assert scorer.evidence("The clinic is open from Monday to Saturday, 8 am to 6 pm.", context)["edit_neg_flip"] == 1.0
    assert scorer.evidence("The clinic is open from Monday to Friday, 8 am to 6 pm.", context)["edit_neg_flip"] == 0.0


@pytest.mark.parametrize("sentence", [
    "The clinic is open Monday to Saturday, then 8 am to 6 pm.",  # "then": found nowhere in the source, not moved
    "The clinic is open Monday to Saturday, not 8 am to 6 pm.",  # a negation is never read as moved
])
def test_only_a_moved_function_word_is_left_out_of_a_swap(scorer, sentence):
    context = "The Norbury clinic is open not from Monday to Friday, 8 am to 6 pm."
    _, edits = scorer.local_edits(sentence, context)
    assert not any(kind == "anchored" for kind, _, _ in edits)


LIBRARY = ("The refurbished mobile library stops at the Kelham village green on Thursdays. The bridge over the Kel was "
           "repainted in 2018. Loans are free.")


@pytest.mark.parametrize(("sentence", "feature"), [
    ("The refurbished mobile library stops on Tuesdays at the Kelham village green.", "edit_neg_flip"),  # near copy
    ("The mobile library stops on Tuesdays at the Kelham village green.", "edit_neg_flip"),  # and a word left out
    ("On Tuesdays the mobile library stops at the Kelham village green.", "edit_neg_flip"),  # moved to the start
    ("In 2019 the bridge over the Kel was repainted.", "edit_swap_num"),  # a number found nowhere in the context
])
def test_a_word_swapped_inside_a_moved_phrase_counts(scorer, monkeypatch, sentence, feature):
    assert scorer.evidence(sentence, LIBRARY)[feature] == 1.0
    kept = sentence.replace("Tuesdays", "Thursdays").replace("2019", "2018")
    assert scorer.evidence(kept, LIBRARY) | {"edit_match": 0.0} == dict.fromkeys(EDIT_FEATURES, 0.0)  # moved only
    monkeypatch.setattr(edits_module, "_moved_phrases", lambda *_: [])  # version 86
    assert EditScorer().evidence(sentence, LIBRARY)[feature] == 0.0


def test_a_moved_word_pairs_only_with_one_it_may_swap(scorer):
    """"refurbished" left out before "Monday" must not take Wednesday's place as its pair (v87)."""
    context = "The refurbished Ashcombe library will be open to visitors from Monday, 9 am. Entry is free."
    sentence = "The Ashcombe library will be open to visitors Wednesday, from 9 am."
    _, changes = scorer.changes(sentence, context)
    assert [(c.feature, c.sentence, c.source) for c in changes] == [("edit_neg_flip", "Wednesday", "Monday")]


def test_a_unit_swapped_in_a_paraphrased_copy_counted_only_before_v28(scorer, monkeypatch):
    sentence = "Skiing was practised more than 100 years ago in China, according to paintings."
    assert scorer.evidence(sentence, PARAPHRASED)["edit_neg_flip"] == 0.0
    monkeypatch.setattr(rules_module, "UNIT_GROUPS", ())  # version 27, not kept
    assert EditScorer().evidence(sentence, PARAPHRASED)["edit_neg_flip"] == 1.0


def test_an_acronym_of_a_context_name_is_no_swapped_name(scorer):
    context = ("The Environmental Protection Agency will fine the company 2 million dollars. Officials at the "
               "Bank of the West said nothing.")
    assert scorer.evidence("The EPA will fine the company 2 million dollars.", context)["edit_swap_word"] == 0.0
    assert scorer.evidence("The FDA will fine the company 2 million dollars.", context)["edit_swap_word"] == 1.0
    # runs stop at punctuation: "West. Officials" spells no "WO"; lowercase words other than of/and/for/the too
    assert scorer.evidence("The BWO will fine the company 2 million dollars.", context)["edit_swap_word"] == 1.0
    assert scorer.evidence("The CFC will fine the company 2 million dollars.", context)["edit_swap_word"] == 1.0


BOUNDED = ("Grants may cover up to 80 percent of project costs. The records are kept up to date. Tenants must "
           "give 60 days' notice before moving out.")


@pytest.mark.parametrize("sentence, described", [
    ("Grants must cover up to 80 percent of project costs.", ["'must' for 'may' (flip)"]),  # a duty for a permission
    ("Grants may cover at least 80 percent of project costs.", ["'at least' for 'up to' (flip)"]),  # "up to": most
    ("Grants may cover a minimum of 80 percent of project costs.", ["'a minimum of' for 'up to' (flip)"]),
    ("Tenants may give 60 days' notice before moving out.", ["'may' for 'must' (flip)"]),
    ("Grants can cover up to 80 percent of project costs.", []),  # one class: may, might, can, could
    ("Grants may cover as much as 80 percent of project costs.", []),  # not a bound of the rule
    ("The records are kept at least partly up to date.", []),  # "up to" with no number: no bound swapped
])
def test_a_modal_or_a_bound_swapped_is_a_flip(scorer, monkeypatch, sentence, described):
    assert [c.describe() for c in scorer.changes(sentence, BOUNDED)[1]] == described
    # version 31: no modal or bound group, "up to" two words
    no_modals = tuple(g for g in CONTRASTS if not {stem("must"), stem("minimum")} & frozenset().union(*g))
    assert len(no_modals) == len(CONTRASTS) - 2
    monkeypatch.setattr(rules_module, "OPPOSITES", opposites(OPPOSITE_PAIRS, no_modals))
    monkeypatch.setattr(rules_module, "_bound_keys", lambda toks: [t.key for t in toks])
    assert EditScorer().changes(sentence, BOUNDED)[1] == []


NEGATED = "A deal is not likely before Friday. She does not like horror films. The vote was not fair."


@pytest.mark.parametrize("sentence, described", [
    ("A deal is unlikely before Friday.", []),  # a negating prefix in place of the negation: restated (v34)
    ("She dislikes horror films.", []),  # the auxiliary of the negation left out
    ("The vote was unfair.", []),
    ("A deal is likely before Friday.", ["'not' left out (flip)"]),
    ("She likes horror films.", ["'does not' left out (flip)"]),
    ("The vote was not unfair.", ["'unfair' for 'fair' (flip)"]),  # a prefix with the negation kept
])
def test_a_negated_word_restated_by_its_prefix_is_no_flip(scorer, monkeypatch, sentence, described):
    assert [c.describe() for c in scorer.changes(sentence, NEGATED)[1]] == described
    monkeypatch.setattr(rules_module, "_bare", lambda toks: toks)  # version 32: the negation words stay
    changes = EditScorer().changes(sentence, NEGATED)[1]
    assert [c.feature for c in changes] == ["edit_neg_flip"]


DOUBLED = ("Dogs are allowed on the north beach. The winning team gets 5,000 pounds. Work starts at the beginning "
           "of May.")


@pytest.mark.parametrize("sentence, described", [
    ("Dogs are banned on the north beach.", ["'banned' for 'allowed' (flip)"]),  # "banned" stems to "bann" (v35)
    ("Dogs are forbidden on the north beach.", ["'forbidden' for 'allowed' (flip)"]),  # an irregular form, listed
    ("The losing team gets 5,000 pounds.", ["'losing' for 'winning' (flip)"]),
    ("Work starts at the end of May.", ["'end' for 'beginning' (flip)"]),
])
def test_a_swap_through_a_doubled_consonant_is_a_flip(scorer, monkeypatch, sentence, described):
    assert [c.describe() for c in scorer.changes(sentence, DOUBLED)[1]] == described
    groups = tuple(classes(g.replace(" forbidden forbade", ""), doubled=False) for g in CONTRAST_GROUPS)
    monkeypatch.setattr(rules_module, "OPPOSITES", opposites(OPPOSITE_PAIRS, groups, doubled=False))  # version 34
    assert EditScorer().changes(sentence, DOUBLED)[1] == []


def test_forms_double_a_final_consonant_only_after_one_vowel():
    assert forms("ban") == {"ban", stem("banned"), stem("banning")}
    assert forms("quit") == {stem("quit")} and forms("allow") == {stem("allow")} and forms("fix") == {stem("fix")}
    assert forms("ban", doubled=False) == {"ban"}


VERBS = ("The team did not score in the second half. The rocket failed to reach orbit. The shop stopped selling "
         "tobacco.")


@pytest.mark.parametrize("sentence, described, before", [
    ("The team failed to score in the second half.", [], True),  # a verb that negates for "did not": restated (v36)
    ("The rocket did not reach orbit.", [], True),
    ("The shop no longer sells tobacco.", [], True),
    ("The rocket reached orbit.", ["'failed to' left out (flip)"], False),  # dropped, like a "not"
    ("The shop did not stop selling tobacco.", ["'did not stop' for 'stopped' (flip)"], True),  # the verb negated
    ("The team scored in the second half.", ["'did not' left out (flip)"], True),
])
def test_a_verb_that_negates_counts_as_a_negation(scorer, monkeypatch, sentence, described, before):
    assert [c.describe() for c in scorer.changes(sentence, VERBS)[1]] == described
    monkeypatch.setattr(rules_module, "_negations", lambda toks: sum(  # version 35: negation words only
        1 for t in toks if not t.number and t.key in rules_module.NEGATIONS))
    assert bool(EditScorer().changes(sentence, VERBS)[1]) == before


def test_stop_negates_in_every_sense(scorer):
    # the cost of version 36: "stopped" at a station negates nothing, but the rules read it as a negation
    assert scorer.evidence("The bus called at Ryde.", "The bus stopped at Ryde.")["edit_neg_flip"] == 1.0
    assert scorer.evidence("The bus stops at Ryde.", "The bus stops at Ryde and Cowes.")["edit_neg_flip"] == 0.0


CONTRADICTED = ("The museum does not open on Mondays. Not many voters came to the polls. The board did not accept "
                "the offer. Sales did not increase in May.")


@pytest.mark.parametrize("sentence, described", [
    ("The museum is closed on Mondays.", []),  # a contradictory for the negated word: restated (v37)
    ("Few voters came to the polls.", []),  # also leading the sentence
    ("The board rejected the offer.", []),
    ("The museum is not closed on Mondays.", ["'closed' for 'open' (flip)"]),  # the negation kept
    ("Sales fell in May.", ["'fell' for 'did not increase' (flip)"]),  # a contrary, not a contradictory
    ("The museum opens on Mondays.", ["'does not' left out (flip)"]),
])
def test_a_negated_word_restated_by_its_contradictory_is_no_flip(scorer, monkeypatch, sentence, described):
    assert [c.describe() for c in scorer.changes(sentence, CONTRADICTED)[1]] == described
    monkeypatch.setattr(rules_module, "CONTRADICTORIES", frozenset())  # version 36
    assert EditScorer().changes(sentence, CONTRADICTED)[1]


LOOKALIKES = ("The river, the researchers note, rose two metres overnight. Casillas wore the number 1 shirt. Anyone "
              "on the no-fly list can appeal within 30 days.")


@pytest.mark.parametrize("sentence, flipped", [
    ("The river rose two metres overnight.", False),  # "note" stems to "not": no negation left out (v38)
    ("Casillas wore the No. 1 shirt.", False),  # "No." before digits is "number"
    ("Casillas wore the no 1 shirt.", False),
    ("Anyone on the list can appeal within 30 days.", False),  # "no-fly" is one word
    ("The river, the researchers note, did not rise two metres overnight.", True),  # real negations still count
    ("Casillas never wore the number 1 shirt.", True),
    ("Anyone on the no-fly list cannot appeal within 30 days.", True),
])
def test_words_that_only_look_like_negations_are_none(scorer, sentence, flipped):
    assert (scorer.evidence(sentence, LOOKALIKES)["edit_neg_flip"] > 0) == flipped


def test_no_one_stays_a_negation():
    # "one" is a number word, not digits: "No one came." negates (v38 reads only "no" before digits as "number")
    keys = [t.key for t in tokens("No one came. No. 7 won. The no-go zone.")]
    assert keys[0] == "no" and "number" in keys and "no-go" in keys
    assert rules_module._negations(tokens("The researchers noted it.")) == 0
    assert rules_module._negations(tokens("No one came.")) == 1


def test_the_contradictories_are_pairs_of_the_contrast_groups():
    assert CONTRADICTORIES <= OPPOSITES


#: a context and sentences against it, with the changes that the features count, described for people
DESCRIBED = ("Patients who received the drug recovered 1.5 days faster than those given a placebo. Germany beat "
             "Brazil 7-1 in the semi-final. The museum does not open on Mondays. Tickets are free for Plus members. "
             "The bank will cut 300 jobs in Lisbon.")


@pytest.mark.parametrize("sentence, described", [
    ("Patients on the drug recovered 1.5 days slower than those on placebo.", ["'slower' for 'faster' (flip)"]),
    ("Brazil beat Germany 7-1 in the semi-final.", ["'Brazil' and 'Germany' exchanged (flip)"]),
    ("The museum opens on Mondays.", ["'does not' left out (flip)"]),
    ("The museum doesn't open on Mondays and never will.", []),  # an added clause is no edit of the source
    ("Tickets are free for everyone.", ["'everyone' for 'Plus members' (flip)"]),
    ("The bank will cut 400 jobs in Porto.", ["'400' for '300' (number)", "'Porto' for 'Lisbon' (name)"]),
    ("The bank will cut 300 jobs in Lisbon.", []),
])
def test_changes_say_what_the_features_count(scorer, sentence, described):
    match, changes = scorer.changes(sentence, DESCRIBED)
    assert [c.describe() for c in changes] == described
    ev = scorer.evidence(sentence, DESCRIBED)  # the features are the changes counted
    assert ev["edit_match"] == match
    for feature in EDIT_FEATURES[1:]:
        assert ev[feature] == sum(c.feature == feature for c in changes)


def test_the_monitor_prints_what_a_flagged_copy_changed_when_it_counted_it():
    from faithwatch.cli.monitor import _edit_changes
    from faithwatch.results import SentenceReport

    context = "The bank will cut 300 jobs in Lisbon. Its profit rose 4 percent."
    text = "The bank will cut 400 jobs in Lisbon."

    def report(**features: float) -> SentenceReport:
        return SentenceReport(0, text, 0, len(text), 0, 9, {"edit_match": 0.9, **features}, 0.2, True, "d")

    assert [c.describe() for c in _edit_changes(report(edit_swap_num=1.0), context)] == ["'400' for '300' (number)"]
    assert _edit_changes(report(edit_swap_num=0.0), context) == []  # the monitor counted none
    assert _edit_changes(report(edit_swap_num=1.0), "Its profit rose 4 percent.") == []  # not found again: none


YEARS = "Arsenal finished second in the 2007-08 season. The club sold 60,000 tickets for 2014-2015."


@pytest.mark.parametrize("sentence, swapped", [
    ("Arsenal finished second in the 2007-2008 season.", False),  # the short end is found by its full year
    ("The club sold 60,000 tickets for 2014-15.", False),
    ("Arsenal finished second in the 2007-09 season.", True),  # another year is still a swap
    ("The club sold 60,000 tickets for 2014-16.", True),
    ("Arsenal finished second in the 2006-07 season.", True),  # a shifted range: keys aligned as written (v41)
])
def test_a_year_range_written_short_or_in_full_is_one_range(scorer, sentence, swapped):
    assert (scorer.evidence(sentence, YEARS)["edit_swap_num"] > 0) == swapped


def test_year_range_ends():
    from faithwatch.text import number_forms, year_range_ends

    assert year_range_ends("the 2007-08 season") == {9: "2008"}
    assert list(year_range_ends("1914–18, 2019/20 and 1999-00").values()) == ["1918", "2020", "2000"]
    # a date, a "range" that ends before it starts or spans more than 20 years, a longer number: none
    assert year_range_ends("on 2007-08-15, in 2010-09, from 1950-99, code 12007-08") == {}
    assert number_forms("2007-08") == [frozenset({"2007"}), frozenset({"8", "2008"})]


DATES = "The bridge opened on 3 March 2015 after delays. The storm made landfall on Aug. 29 near the port."


@pytest.mark.parametrize("sentence, flipped, swapped", [
    ("The bridge opened on 3 Mar. 2015 after delays.", False, False),  # an abbreviated month is the month (v42)
    ("The storm made landfall on August 29 near the port.", False, False),
    ("The bridge opened on 3 May 2015 after delays.", True, False),  # months are a contrast group (v42)
    ("The storm made landfall on Apr. 29 near the port.", True, False),
])
def test_months_abbreviated_restate_and_months_swapped_flip(scorer, sentence, flipped, swapped):
    ev = scorer.evidence(sentence, DATES)
    assert (ev["edit_neg_flip"] > 0, ev["edit_swap_word"] > 0) == (flipped, swapped)


def test_month_name_needs_a_number_beside_it():
    from faithwatch.text import month_name

    def read(text, word):
        i = text.index(word)
        return month_name(text, i, i + len(word))

    assert [read("on Feb. 14", "Feb"), read("3 Mar 2015", "Mar"), read("the 14th Sept", "Sept"),
            read("feb . 14", "feb")] == ["february", "march", "september", "february"]
    assert read("Jan Smith won.", "Jan") is None and read("to mar the view", "mar") is None
    assert EditScorer().evidence("Parliament votes on Monday.", "Parliament votes on Tuesday.")["edit_neg_flip"] == 1


MONEY = "The regulator fined the bank £3m for the breach. The deal is worth $2bn. The tower is 330m tall."


@pytest.mark.parametrize("sentence, changed", [
    ("The regulator fined the bank £3bn for the breach.", True),  # a magnitude swapped is a scale swap (v44)
    ("The deal is worth $2m.", True),
    ("The regulator fined the bank £3 million for the breach.", False),  # "£3m" is "£3 million"
    ("The deal is worth 2 billion dollars.", False),
    ("The tower is 330 metres tall.", False),  # "m" after a number with no currency symbol stays a unit
])
def test_a_magnitude_abbreviation_is_a_scale_word(scorer, sentence, changed):
    assert bool(scorer.changes(sentence, MONEY)[1]) == changed


WORDS = "The school has three hundred pupils. The marathon drew 25,000 runners from 40 countries."


@pytest.mark.parametrize("sentence, swapped", [
    ("The school has 300 pupils.", False),  # a number in words is one number, its value (v46)
    ("The marathon drew twenty-five thousand runners from 40 countries.", False),
    ("The school has 350 pupils.", True),  # another value is still a swapped number
    ("The marathon drew thirty-five thousand runners from 40 countries.", True),
])
def test_a_number_in_words_is_one_number(scorer, sentence, swapped):
    assert (scorer.evidence(sentence, WORDS)["edit_swap_num"] > 0) == swapped


def test_a_change_shows_the_number_as_written(scorer):
    (change,) = scorer.changes("The school has three hundred and fifty pupils.", "The school has 300 pupils.")[1]
    assert change.describe() == "'three hundred and fifty' for '300' (number)"


def test_spelled_numbers_and_digits_for_words():
    from faithwatch.text import digits_for_words, spelled_numbers

    assert spelled_numbers("It has three hundred pupils.") == [(7, 20, "300")]
    assert [d for _, _, d in spelled_numbers(
        "Twenty-five, forty two, four hundred and fifty, twelve hundred, twenty-five thousand, two thousand five "
        "hundred, ninety-nine thousand nine hundred and ninety-nine")] == [
        "25", "42", "450", "1200", "25,000", "2500", "99,999"]
    # a single number word, two numbers side by side, a plural, an ordinal to tenth, a word holding a number word,
    # a length of time: as written
    for text in ("two million", "nineteen ninety", "one or two", "thousands of", "the first and the tenth",
                 "someone often", "five ten-minute breaks", "No one came.", "a thirty-second advert"):
        assert digits_for_words(text) == text, text
    assert digits_for_words("a twenty-five-year-old man") == "a 25-year-old man"


@pytest.mark.parametrize(("text", "digits"), [
    ("the twenty-first century", "the 21st century"),  # spelled-number rule 4: ordinals 11th to 99th
    ("She finished forty second.", "She finished 42nd."),
    ("the Thirteenth Amendment", "the 13th Amendment"),
    ("his eleventh, twelfth and ninety-third goals", "his 11th, 12th and 93rd goals"),
    ("the sixtieth and seventy-fourth sessions", "the 60th and 74th sessions"),
    ("the thirty-second president", "the 32nd president"),
    ("forty-two thousand and twenty-second", "42,000 and 22nd"),  # an ordinal is read before the cardinals
])
def test_ordinals_in_words_read_in_digits(text, digits):
    from faithwatch.text import digits_for_words

    assert digits_for_words(text) == digits


ORDINAL = "The observation tower was finished in the twenty-first century. Its walls are made of grey granite."


@pytest.mark.parametrize(("sentence", "swapped"), [
    ("The observation tower was finished in the 21st century.", False),  # the same ordinal, in digits
    ("The observation tower was finished in the twenty-first century.", False),
    ("The observation tower was finished in the 20th century.", True),
    ("The observation tower was finished in the twenty-second century.", True),
])
def test_an_ordinal_in_words_is_its_number(scorer, sentence, swapped):
    assert (scorer.evidence(sentence, ORDINAL)["edit_swap_num"] > 0) == swapped


@pytest.mark.parametrize(("context", "sentence", "swapped"), [
    ("The city has 1,500,000 residents and two airports.", "The city has 1.5 million residents and two airports.",
     False),  # v59: the same value, with a magnitude
    ("The museum received 1.2 million visitors in 2022.", "The museum received 1,200,000 visitors in 2022.", False),
    ("The firm was fined £4.5m by the regulator.", "The firm was fined £4,500,000 by the regulator.", False),
    ("12,000 fans watched the final in the rain.", "12 thousand fans watched the final in the rain.", False),
    ("The museum received 1.2 million visitors in 2022.", "The museum received 1,300,000 visitors in 2022.", True),
    ("The firm was fined £4,500,000 by the regulator.", "The firm was fined £45m by the regulator.", True),
])
def test_a_value_with_a_magnitude_restates_it_in_full(scorer, context, sentence, swapped):
    assert (scorer.evidence(sentence, context)["edit_swap_num"] > 0) == swapped


@pytest.mark.parametrize(("text", "read"), [
    ("Half of the shoppers bring bags.", "50% of the shoppers bring bags."),  # spelled-number rule 5 B
    ("Half the staff work from home.", "50% of the staff work from home."),
    ("Almost two-thirds of the members voted.", "Almost 67% of the members voted."),
    ("a third of the pupils, three quarters of households, a fifth of the land", "33% of the pupils, 75% of "
     "households, 20% of the land"),
    ("One in four adults smokes; nine out of ten dentists agree; 1 in 8 cases", "25% of adults smokes; 90% of "
     "dentists agree; 12.5% of cases"),
    ("one in ten of its volunteers", "10% of its volunteers"),
    ("The risk is one in six.", "The risk is 17%."),
])
def test_a_share_in_words_reads_as_its_percentage(text, read):
    from faithwatch.text import shares_as_percents

    assert shares_as_percents(text) == read


def test_what_is_no_share_stays_words():
    from faithwatch.text import share_values, shares_as_percents

    for text in ("in the first half of the season", "the other half of the pair", "half a million", "half-time",
                 "the third of May", "the third quarter", "He scored two in five minutes.", "1 in 10,000 births",
                 "2.5 in 10 people", "one and a half of them", "four in three", "one in 12"):
        assert shares_as_percents(text) == text, text
    assert share_values("About half of the town and one in three voters") == [(6, "50", "near"), (27, "33", None)]


SHARE = "Two-thirds of the members backed the proposal. The vote was held in the village hall."


@pytest.mark.parametrize(("sentence", "swapped"), [
    ("67% of the members backed the proposal.", False),  # the same share as a percentage
    ("Two-thirds of the members backed the proposal.", False),
    ("40% of the members backed the proposal.", True),
    ("A third of the members backed the proposal.", True),
])
def test_a_share_is_its_percentage_to_the_edits(scorer, sentence, swapped):
    assert (scorer.evidence(sentence, SHARE)["edit_swap_num"] > 0) == swapped


def test_a_share_change_shows_the_share_as_written(scorer):
    (change,) = scorer.changes("Almost a third of the staff work.", "Almost 50% of the staff work.")[1]
    assert change.describe() == "'a third' for '50' (number)"
    (change,) = scorer.changes("Half the staff left.", "40% of the staff left.")[1]
    assert change.describe() == "'Half' for '40' (number)"


def test_measures_read_a_number_with_its_unit():
    from faithwatch.text import Measure, measures, same_quantity

    assert measures("It took two weeks and 4,500 metres; 20 mph.") == [
        Measure("2", "weeks", "time", 14.0), Measure("4500", "metres", "length", 4500.0),
        Measure("20", "mph", "speed", 20 * 0.44704)]
    assert measures("£5m and 5 m, one in four, 1 in 10, half off") == []  # not "m", "in" or a share
    (hours,), (minutes,), (short,) = measures("3 hours"), measures("180 minutes"), measures("140 minutes")
    assert same_quantity(minutes, hours) and not same_quantity(short, hours)
    assert not same_quantity(hours, hours)  # the same unit: compared as numbers, as before
    (km,), (miles,) = measures("8 km"), measures("five miles")
    assert same_quantity(km, miles)  # 8.05 km: within 5%


UNITS = "The repairs took three hours on Sunday. The path runs for 4.5 km along the canal."


@pytest.mark.parametrize(("sentence", "changed"), [
    ("The repairs took 180 minutes on Sunday.", False),  # unit rule 1 (v61)
    ("The path runs for 4,500 metres along the canal.", False),
    ("The repairs took three hours on Sunday.", False),
    ("The repairs took 140 minutes on Sunday.", True),  # another value
    ("The path runs for 9,000 metres along the canal.", True),
    ("The repairs took three days on Sunday.", True),  # another unit at the same number
])
def test_a_quantity_in_another_unit_is_no_change(scorer, sentence, changed):
    assert bool(scorer.changes(sentence, UNITS)[1]) == changed


ARTICLES = "The fair ran for a week in June. The bake needs half an hour. The trail runs for 16 km."


@pytest.mark.parametrize(("sentence", "changed"), [
    ("The fair ran for 7 days in June.", False),  # unit rule 2 (v62)
    ("The bake needs 30 minutes.", False),
    ("The trail runs for ten miles.", False),  # unit rule 1 (v61)
    ("The fair ran for 9 days in June.", True),  # another value
    ("The bake needs 45 minutes.", True),
    ("The fair ran for a month in June.", True),
])
def test_a_quantity_with_an_article_in_another_unit_is_no_change(scorer, sentence, changed):
    assert bool(scorer.changes(sentence, ARTICLES)[1]) == changed
    # the reverse: the sentence writes the article
    assert bool(scorer.changes("The fair ran for a week in June.", "The fair ran for 7 days in June.")[1]) is False
    assert bool(scorer.changes("The fair ran for a week in June.", "The fair ran for 10 days in June.")[1]) is True


def test_measures_read_an_article_as_one_without_a_number():
    from faithwatch.text import Measure, measures

    assert measures("a week, an hour, a mile") == [
        Measure("", "week", "time", 7.0, "a"), Measure("", "hour", "time", 1 / 24, "an"),
        Measure("", "mile", "length", 1609.344, "a")]
    assert measures("a few days, a hundred miles, data day, aha") == []
    # part of a larger amount that is none of rule 2 C's (rule 2 B)
    assert measures("a period of a week, a week and a day") == [Measure("", "day", "time", 1.0, "a")]
    assert measures("It took a week and cost little.") == [Measure("", "week", "time", 7.0, "a")]
    # before a hyphen: "an hour-long talk" is an hour, "half an hour-long talk" half an hour (v64)
    assert measures("an hour-long talk") == [Measure("", "hour", "time", 1 / 24, "an")]
    assert [(q.number, q.base) for q in measures("a half an hour-long talk")] == [("0.5", 1 / 48)]


@pytest.mark.parametrize(("text", "number", "unit", "base"), [  # unit rule 2 C: an amount read as its value
    ("three-quarters of an hour", "0.75", "hour", 0.75 / 24),
    ("half an hour", "0.5", "hour", 0.5 / 24),
    ("half of a week", "0.5", "week", 3.5),
    ("a third of a mile", "0.333333", "mile", 1609.344 / 3),
    ("a day and a half", "1.5", "day", 1.5),
    ("three days and a half", "3.5", "days", 3.5),
    ("a pound and a quarter", "1.25", "pound", 1.25 * 0.45359237),
    ("an hour and 20 minutes", "80", "minutes", 80 / 1440),
    ("a week and three days", "10", "days", 10.0),
    ("2 hours and 15 minutes", "135", "minutes", 135 / 1440),
    ("14-hour and 30-minute", "870", "minute", 870 / 1440),  # a hyphen after the whole raised ValueError
    ("two and a half kilometres", "2.5", "kilometres", 2500.0),
    ("25 and a half miles", "25.5", "miles", 25.5 * 1609.344),
    ("a litre and a half", "1.5", "litre", 1.5),  # followed by "of milk" below (unit rule 2 E)
])
def test_measures_read_an_amount_as_its_value(text, number, unit, base):
    from faithwatch.text import measures

    (q,) = measures(f"It took {text} in all.") if "litre" not in text else measures(f"She poured {text} of milk.")
    assert (q.number, q.unit, q.written, q.amount) == (number, unit, " ".join(text.lower().split()), True)
    assert q.base == pytest.approx(base)


@pytest.mark.parametrize("text", [
    "between 5 km and 10 km",  # a second unit not smaller: two quantities
    "3 days and 2 weeks",
    "2 km and a third of the route",  # a share of something else
    "four-thirds of an hour",  # a share of a whole or more
])
def test_measures_read_no_amount_where_there_is_none(text):
    from faithwatch.text import measures

    assert not any(q.amount for q in measures(text))


def test_the_tokens_of_an_amount_are_marked_with_it_and_keep_their_keys():
    from faithwatch.alignment.edits import tokens

    toks = tokens("The jam simmers for three-quarters of an hour today.")
    assert [t.key for t in toks] == [t.key for t in tokens("The jam simmers for 75% of an hour today.")][:4] + [
        "75", "of", "an", "hour", "today"]
    assert [(t.amount.number if t.amount else None) for t in toks] == [None] * 4 + ["0.75"] * 4 + [None]


AMOUNTS = ("The ferry takes 90 minutes to cross. The jam simmers for 45 minutes. The crew rested for a day and a "
           "half. The trail runs for 2,500 metres through the old beech woods.")


@pytest.mark.parametrize(("sentence", "feature"), [
    ("The ferry takes one and a half hours to cross.", None),  # unit rule 2 C (v62)
    ("The jam simmers for three-quarters of an hour.", None),
    ("The crew rested for 36 hours.", None),  # the context's amount (unit rule 1)
    ("The crew rested for 40 hours.", "edit_neg_flip"),
    ("The crew rested for a day and a half.", None),  # a copy
    ("The trail runs for two and a half kilometres through the old beech woods.", None),
    ("The jam simmers for an hour and 20 minutes.", "edit_swap_num"),
    ("The crew rested for two days and a half.", "edit_swap_num"),
    ("The trail runs for seven and a half kilometres through the old beech woods.", "edit_swap_num"),
    ("The ferry takes four and a half hours to cross.", "edit_swap_num"),
])
def test_an_amount_is_no_change_at_its_value_and_a_change_at_another(scorer, sentence, feature):
    changes = scorer.changes(sentence, AMOUNTS)[1]
    assert [c.feature for c in changes] == ([feature] if feature else [])


SOURCE_AMOUNTS = "The storm battered the coast at Kelby for a day and a half without any sign of easing."


@pytest.mark.parametrize(("sentence", "changed"), [  # unit rule 2 E (v63): the source side is an amount
    ("The storm battered the coast at Kelby for thirty-six hours without any sign of easing.", False),
    ("The storm battered the coast at Kelby for twelve hours without any sign of easing.", True),
    ("The storm battered the coast at Kelby for 60 hours without any sign of easing.", True),
])
def test_a_quantity_against_a_source_amount_is_read(scorer, sentence, changed):
    assert bool(scorer.changes(sentence, SOURCE_AMOUNTS)[1]) == changed


def test_half_off_is_no_share():
    from faithwatch.text import spelled_shares

    assert spelled_shares("Coats are half off today; half offered to pay.") == []
    assert spelled_shares("Coats are half of the stock.") == [(10, 17, "50", True)]


REPORT = ("Halvard Mills reported revenue of $4.2 billion for 2023, up 8% from the previous year. Net income fell to "
          "$310 million because of restructuring charges. Its share price rose 12 per cent in March and fell 12 per "
          "cent in May. The firm employs about 12,000 people.")


@pytest.mark.parametrize(("sentence", "flipped"), [  # v84: a change's direction at a number the context holds
    ("Halvard's revenue fell 8% last year.", "'fell 8' for 'up 8'"),  # a paraphrase: no near copy
    ("Revenue saw an 8% drop in 2023.", "'8 drop' for 'up 8'"),  # the word after the number
    ("Last year the company's revenue was down 8%.", "'down 8' for 'up 8'"),
    ("After the restructuring, its profit climbed to $310 million.", "'climbed 310' for 'fell 310'"),
    ("Net income rose to $310 million.", "'rose' for 'fell'"),  # a near copy's own flip, counted once
    ("Halvard's revenue grew 8% last year.", None),  # the same direction
    ("Revenue was 8 per cent higher than a year before.", None),
    ("Profit declined to $310 million.", None),
    ("Halvard stock lost 12 per cent during May.", None),  # the context has 12 both ways
    ("Up to 8% of the staff may leave.", None),  # a bound, no direction
    ("About 8 people fell ill at the plant.", None),  # a word after the number's noun is not its direction
    ("Sales fell in 2023.", None),  # a year takes no direction
    ("The firm cut 12,000 jobs.", None),  # the context gives 12,000 no direction
])
def test_a_change_reversed_at_a_number_the_context_holds_flips(scorer, sentence, flipped):
    changes = [c for c in scorer.changes(sentence, REPORT)[1] if c.feature == "edit_neg_flip"]
    assert [c.describe() for c in changes] == ([f"{flipped} (flip)"] if flipped else [])


def test_directions_read_the_nearer_word_and_skip_fillers():
    from faithwatch.alignment.edits import directions, tokens

    def read(text):
        return [(d.words(), d.way) for d in directions(tokens(text))]

    assert read("Exports fell by 4.5 per cent.") == [("fell 4.5", 1)]
    assert read("It posted a $1.8 million loss.") == [("1.8 loss", 1)]
    assert read("Sales rose 3% while costs dropped 5%.") == [("rose 3", 0), ("dropped 5", 1)]
    assert read("Prices rose sharply over many months to 40.") == []  # more than 3 tokens before
    assert read("Rents rose, and 40 families left.") == []  # another clause


TOWN = ("Attendance at the Brackley Show dropped to 41,000 this year. Pass rates at the town's schools slipped 0.4 per "
        "cent. Bus fares eased 2% in June.")


@pytest.mark.parametrize(("sentence", "flipped"), [  # v85: a number ending the sentence; "slipped", "eased"
    ("This year the show's visitor numbers climbed to 41,000.", "'climbed 41,000' for 'dropped 41,000'"),
    ("The schools' pass rates rose 0.4 per cent.", "'rose 0.4' for 'slipped 0.4'"),
    ("In June, fares for buses went up 2%.", "'up 2' for 'eased 2'"),
    ("This year the show's visitor numbers fell to 41,000.", None),
    ("The schools' pass rates declined 0.4 per cent.", None),
])
def test_a_number_ending_the_sentence_and_slipped_take_a_direction(scorer, sentence, flipped):
    changes = [c for c in scorer.changes(sentence, TOWN)[1] if c.feature == "edit_neg_flip"]
    assert [c.describe() for c in changes] == ([f"{flipped} (flip)"] if flipped else [])


def test_a_footnote_mark_is_no_year_and_no_error(scorer):
    # "¹" is a digit to str.isdigit but not to int(): the direction rule must read it without raising (v85)
    changes = scorer.changes("Revenue rose 8%¹ last year.", REPORT)[1]
    assert [c.describe() for c in changes] == []
    assert scorer.changes("Revenue fell 8%¹ last year.", REPORT)[1][0].describe() == "'fell 8' for 'up 8' (flip)"


MATCH = "The match was played in heavy rain. Smith scored the winning goal in the 89th minute. Officials said the " \
        "pitch will be relaid."


@pytest.mark.parametrize(("sentence", "swapped"), [
    ("Jones scored the winning goal in the 89th minute.", 1.0),  # a name for a name leading a near copy (v89)
    ("Jones scored the winning goal in the minute.", 1.0),  # and a word left out
    ("Smith scored the winning goal in the 89th minute.", 0.0),  # the copy
    ("Authorities said the pitch will be relaid.", 0.0),  # a word English writes in lower case: no name
    ("Officials said the pitch will be relaid.", 0.0),
])
def test_a_name_for_a_name_leading_a_near_copy_is_a_swap(scorer, sentence, swapped):
    assert scorer.evidence(sentence, MATCH)["edit_swap_word"] == swapped
    if swapped:
        assert [c.describe() for c in scorer.changes(sentence, MATCH)[1]] == ["'Jones' for 'Smith' (name)"]


def test_a_leading_name_is_a_swap_only_for_a_name_the_context_lacks(scorer):
    assert scorer.evidence("The striker scored the winning goal.", "Jones scored the winning goal.")[
        "edit_swap_word"] == 0.0  # no name on the sentence's side
    assert scorer.evidence("Jones scored the winning goal.", "The striker scored the winning goal.")[
        "edit_swap_word"] == 0.0  # no name on the source's side
    context = "Jones missed a penalty. Smith scored the winning goal."
    assert scorer.evidence("Jones scored the winning goal.", context)["edit_swap_word"] == 0.0  # found elsewhere


def test_a_capitalised_list_item_or_heading_leads_no_name_swap(scorer):
    context = "Open the app on your phone. Then tap Settings."
    assert scorer.evidence("1. Open iTunes on your phone.", context)["edit_swap_word"] == 0.0
    assert scorer.evidence("Note: Open the app on your phone.", context)["edit_swap_word"] == 0.0
    # capitalised after a list mark (`entity`), but a word English writes in lower case: no name for Smith
    assert scorer.evidence("2. Staff opened the shop at nine.", "Smith opened the shop at nine.")[
        "edit_swap_word"] == 0.0
    assert scorer.evidence("2. Jones opened the shop at nine.", "Smith opened the shop at nine.")[
        "edit_swap_word"] == 1.0


def test_names_are_capitalised_content_words_english_does_not_write_in_lower_case():
    from faithwatch.alignment.edit_words import lowercase_word

    assert all(lowercase_word(w) for w in ("the", "open", "officials", "authorities", "residents", "said"))
    assert lowercase_word("labourer") == lowercase_word("labourers")  # by stem too
    assert not any(lowercase_word(w) for w in ("tokyo", "madrid", "okafor", "smith"))
    assert [t.name for t in tokens("Officials said Tokyo and the Okafor family agreed")] == [
        False, False, True, False, False, True, False, False]


def _lowercase_builder():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "training" / "lowercase_words.py"
    spec = importlib.util.spec_from_file_location("lowercase_words", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lower_case_list_counts_words_after_a_sentences_first():
    lower, total = _lowercase_builder().count(["The Cat sat. Then the cat ran! A NASA cat."])
    assert total == {"cat": 3, "sat": 1, "the": 1, "ran": 1}  # first words and all capitals are not read
    assert lower == {"cat": 2, "sat": 1, "the": 1, "ran": 1}


def test_the_shipped_lower_case_list_is_rebuilt_from_its_data(tmp_path, monkeypatch):
    import gzip
    import sys
    from importlib.resources import files

    from faithwatch.data.loaders import data_root
    from faithwatch.errors import InputError

    try:
        data_root()
    except InputError:
        pytest.skip("no shared data")
    builder = _lowercase_builder()
    monkeypatch.chdir(builder.OUT.parents[3])  # the training sets' paths are the repository's
    monkeypatch.setattr(sys, "argv", ["lowercase_words.py", "--out", str(tmp_path / "words.txt.gz")])
    builder.main()
    shipped = files("faithwatch.data").joinpath("lowercase_words.txt.gz").read_bytes()
    assert gzip.decompress((tmp_path / "words.txt.gz").read_bytes()) == gzip.decompress(shipped)


@pytest.mark.parametrize(("word", "value"), [
    ("I", 1), ("IV", 4), ("IX", 9), ("XIV", 14), ("XXIV", 24), ("XL", 40), ("LXXXIX", 89),
    ("L", None), ("IIII", None), ("VX", None), ("XXL", None), ("iv", None), ("MIX", None), ("", None),
])
def test_roman_values(word, value):
    from faithwatch.text import roman_value

    assert roman_value(word) == value


ROMAN = ("Louis XIV reigned over France from 1643 until his death in 1715. Patients with Type 2 diabetes joined "
         "the study. World War II ended in Europe in May 1945. The Phase III trial enrolled 400 patients.")


@pytest.mark.parametrize(("sentence", "swapped"), [
    ("Louis XIV reigned over France from 1643 until his death in 1715.", False),
    ("Louis XV reigned over France from 1643 until his death in 1715.", True),  # v99: a swapped number, not a name
    ("Patients with Type II diabetes joined the study.", False),  # the same number as a numeral
    ("Patients with Type I diabetes joined the study.", True),  # "I" after a numbering noun
    ("World War 2 ended in Europe in May 1945.", False),
    ("World War I ended in Europe in May 1945.", True),
    ("The Phase 3 trial enrolled 400 patients.", False),
    ("The Phase IV trial enrolled 400 patients.", True),  # (a number the context holds, "2", would not count)
])
def test_a_roman_numeral_is_its_number(scorer, sentence, swapped):
    evidence = scorer.evidence(sentence, ROMAN)
    assert (evidence["edit_swap_num"] > 0) == swapped
    assert evidence["edit_swap_word"] == 0  # "II" for "2" is no swapped name


def test_a_roman_numeral_the_context_holds_elsewhere_is_no_swap(scorer):
    context = "Louis XIV reigned over France from 1643. His great-grandson Louis XV followed him in 1715."
    assert scorer.evidence("Louis XV reigned over France from 1643.", context)["edit_swap_num"] == 0
    assert scorer.evidence("Louis XVI reigned over France from 1643.", context)["edit_swap_num"] == 1


REGNAL = ("Henry VIII married six times. Louis the Fourteenth ruled France for 72 years. Tsar Boris the First "
          "signed the treaty in the spring.")


@pytest.mark.parametrize(("sentence", "swapped"), [
    ("Henry the Eighth married six times.", False),  # v105: a ruler's number in words is its numeral
    ("Henry the Seventh married six times.", True),  # another number, not a swapped name
    ("Louis XIV ruled France for 72 years.", False),  # "the Fourteenth" reads as "the 14th"
    ("Louis XV ruled France for 72 years.", True),
    ("Tsar Boris II signed the treaty in the spring.", True),
])
def test_a_rulers_number_in_words_is_its_numeral(scorer, sentence, swapped):
    evidence = scorer.evidence(sentence, REGNAL)
    assert (evidence["edit_swap_num"] > 0) == swapped
    assert evidence["edit_swap_word"] == 0


def test_a_rulers_number_in_words_shows_as_written(scorer):
    _, changes = scorer.changes("Louis the Fifteenth reigned over France from 1643 until his death in 1715.", ROMAN)
    assert [c.describe() for c in changes] == ["'the 15th' for 'XIV' (number)"]


@pytest.mark.parametrize(("text", "numbers"), [
    ("Yesterday I went to Paris, and in New York I saw a show.", []),  # the pronoun
    ("King Edmund I and Pope John Paul I met.", ["1", "1"]),
    ("Malcolm X spoke, and a Level I centre opened.", ["10", "1"]),
    ("The nurse set up an IV drip; Charles I was beheaded.", []),  # no capitalised word before; "I" alone
    ("Henry VIII. Chapter IV:", ["8", "4"]),
])
def test_a_roman_numeral_follows_a_capitalised_word(text, numbers):
    read = tokens(text)
    assert [t.roman for t in read if t.roman] == numbers
    assert not any(t.number for t in read)  # keyed and aligned as written (v100)
    assert [t.key for t in read] == [t.key for t in tokens(text.lower())]


def test_the_contrast_groups_file_holds_distinct_groups_of_two_classes_or_more():
    assert len(CONTRAST_GROUPS) == len(set(CONTRAST_GROUPS)) > 600
    assert all(len(classes(group)) >= 2 for group in CONTRAST_GROUPS)
    assert " / ".join(MONTHS) in CONTRAST_GROUPS and " / ".join(WEEKDAYS) in CONTRAST_GROUPS  # "@months", "@weekdays"
    assert not any(group.startswith(("#", "@")) for group in CONTRAST_GROUPS)


@pytest.mark.parametrize("line", ["rocky / / sandy", "@seasons", "rocky /"])
def test_a_malformed_contrast_groups_line_is_a_clear_error(line):
    with pytest.raises(ValueError, match="contrast_groups.txt line 3"):
        parse_groups(f"# a comment\nhigh low\n{line}\n")


def test_the_contrast_groups_file_reads_comments_names_and_groups():
    text = "# v1: a comment\n\nhigh low\n  @months  \nrocky / sandy\n"
    assert parse_groups(text) == ("high low", " / ".join(MONTHS), "rocky / sandy")


def test_the_contrast_groups_load_without_the_data_loaders():
    code = "import sys, faithwatch.alignment.edit_words; print('faithwatch.data.loaders' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # reading the file must not import faithwatch.data (a third of a second)
