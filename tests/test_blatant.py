"""The blatant-error suite (tests/data/blatant.jsonl) against the shipped detector and the embedded model.

Hand-written pairs: each error sentence restates a context sentence with one date, number, name, place or
negation changed; the supported sentences are paraphrases and verbatim copies. The shipped detector must flag at
least 90% of the errors and pass at least 85% of the supported sentences, and flag the demo's wrong answer. The
suite is never trained on (the shipped detector's augmentation set is built by `faithwatch synth-edits` from the
training sets' contexts).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from faithwatch.eval.pairs import load_pairs, pair_summary, score_pairs

SUITE = Path(__file__).parent / "data" / "blatant.jsonl"
EIFFEL = Path(__file__).parent.parent / "examples" / "eiffel.txt"


def test_suite_is_well_formed():
    pairs = load_pairs(SUITE)
    assert len(pairs) >= 150 and len({p.id for p in pairs}) == len(pairs)
    kinds = Counter(p.kind for p in pairs if p.label == "error")
    assert set(kinds) == {"date", "number", "name", "place", "negation"} and min(kinds.values()) >= 15
    supported = Counter(p.kind for p in pairs if p.label == "supported")
    assert set(supported) == {"paraphrase", "verbatim"}
    for p in pairs:
        if p.kind == "verbatim":
            assert p.sentence in p.context, p.id
        if p.label == "error":
            assert p.sentence not in p.context, p.id


@pytest.fixture(scope="module")
def blatant_summary(embedded_monitor):
    """Through the monitor with the shipped detector and the text signals (alignment, lexical, edits, tagger: all it
    reads, and none needs the model, so the model is not run; the demo test below runs it)."""
    from faithwatch.monitor import Monitor

    monitor = Monitor(embedded_monitor.lm, signals=["alignment", "lexical", "edits", "tagger"])
    assert monitor.model_free and monitor.detector.name == embedded_monitor.detector.name
    return pair_summary(score_pairs(monitor, load_pairs(SUITE)))


@pytest.mark.slow
def test_shipped_detector_separates_blatant_errors(blatant_summary):
    s = blatant_summary
    assert s["auroc"] >= 0.75, s
    assert s["supported_passed"] >= 0.85, s
    assert s["errors_flagged"] >= 2 * (1 - s["supported_passed"]), s  # errors flagged far more often
    assert s["flagged[verbatim]"] <= 0.05 and s["flagged[name]"] >= 0.8 and s["flagged[place]"] >= 0.8, s


@pytest.mark.slow
def test_shipped_detector_meets_the_blatant_target(blatant_summary):
    assert blatant_summary["errors_flagged"] >= 0.90, blatant_summary
    assert blatant_summary["supported_passed"] >= 0.85, blatant_summary
    for kind in ("date", "number", "name", "place", "negation"):
        assert blatant_summary[f"flagged[{kind}]"] >= 0.8, (kind, blatant_summary)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["list", "cite", "paren", "link", "opener", "sup", "presenter"])
def test_markup_changes_no_verdict_rate(embedded_monitor, blatant_summary, variant):
    """Markup rules 1, 3, 4 and 7 and framing rule 6: the suite written as a numbered list, with "[1]" or "(Passage
    1)" citations, a link, "In summary, " or "Here is the answer: " before it or a footnote digit after it passes
    supported sentences and flags errors as often as plain (within 0.03; before the rules, 0.125-0.500 of the
    supported sentences passed, 0.646 with "In summary, ", 0.635 with "Here is the answer: ", 0.906 with the
    footnote digit)."""
    from faithwatch.eval.pairs import marked
    from faithwatch.monitor import Monitor

    monitor = Monitor(embedded_monitor.lm, signals=["alignment", "lexical", "edits", "tagger"])
    got = pair_summary(score_pairs(monitor, marked(load_pairs(SUITE), variant)))
    for key in ("supported_passed", "errors_flagged"):
        assert abs(got[key] - blatant_summary[key]) <= 0.03, (variant, key, got[key], blatant_summary[key])


@pytest.mark.slow
def test_demo_answer_is_flagged(embedded_monitor):
    context = EIFFEL.read_text(encoding="utf-8")
    wrong = "The Eiffel Tower was built between 1889 and 1890, but it was actually completed in 1890."
    result = embedded_monitor.score("When was the Eiffel Tower built?", context, wrong)
    assert any(s.flagged for s in result.sentences), [(s.text, s.score) for s in result.sentences]
    right = "The Eiffel Tower was built from 1887 to 1889."
    assert not any(s.flagged for s in embedded_monitor.score("When was the Eiffel Tower built?", context,
                                                             right).sentences)


CONTRASTS = Path(__file__).parent.parent / "training" / "data" / "contrast-check.jsonl"


@pytest.mark.slow
def test_swapped_contrast_words_are_flagged_and_their_controls_pass():
    """training/data/contrast-check.jsonl (docs/transfer.md, "A word swapped for another of its closed group"):
    per context a near copy with a contrast word, unit, comparative or negating prefix swapped (``-s``), a
    restatement (``-f``) and a restatement of another sentence (``-c``)."""
    import json

    from faithwatch.monitor import Monitor

    monitor = Monitor("none")  # as `faithwatch check` scores them: no question, no model
    assert monitor.detector.name == "syncheck-lr"
    # parts 1-3 (edits versions 4-6), 4 and 6 (version 9), 7-9 (versions 10-12), 11's first 8 contexts (14 A), 12
    # (its last 7: 15 B; its first 5: 51 and 52), 13 (51: a.m./p.m., first measured as 16), 15 (18: two sides
    # exchanged), 18 to 20 (21 to 23: more groups), 22 (25: phrases after one preposition reordered), 23 (26: more
    # groups), 24 (28, first measured as 27: a swap in a paraphrased copy), 25's last 6 (30 B: acronyms), 26 (31:
    # more groups), 27 (32: modal verbs, bounds), 29 (34: a negated word restated by its prefix), 30 (35: doubled
    # consonants), 31 (36: verbs that negate), 32 (37: a negated word restated by its contradictory), 33 (38:
    # words that only look like negations), 34 (41 and lexical 8: year ranges), 35 (42 and lexical 9: months), 36
    # (50 and the swapped-number ceiling; 43 was its first rule, not kept), 37 (44 and lexical 11: magnitudes), 41
    # (46 and lexical 14: numbers in words, spelled-number rule 2; 40 was rule 1's, not kept), 43 (52: currency
    # symbols), 44 (a probe of 50 to 52 written after them), 45 (53: a word changed where a cut copy ends), 46
    # (54: a number there), 47 (a probe of 53 and 54 written after them), 48 (56 and lexical 19: a number restated
    # with a bound), 49 (57 and lexical 20: "no more than", "upwards of"), 42 and 50 (58 and lexical 21: ordinals
    # in words, spelled-number rule 4; 47 was rule 3, not kept), 51 (59: a value with a magnitude restated in
    # full), 52 and 53 (60 and lexical 22: a share as a fraction or a percentage, spelled-number rule 5 B; 52 was
    # rule 5's, not kept), 54 (61 and lexical 23: a quantity in another unit, unit rule 1), 55 to 58 (62 and
    # lexical 24: a quantity with an article, an amount as a share or compound of a unit, unit rule 2 D; 55 was
    # rule 2's, 56 rule 2 B's, 57 rule 2 C's, all not kept), 59 (63 and lexical 25: an amount followed by "of", a
    # source side that is an amount, unit rule 2 E), 60 (65: a change where a cut copy begins), 61 (66: the last
    # word of a reworded lead-in), 63 (68: a partial quantifier put as "all"), 64 (69: "one of" left out before
    # "the"), 65 (70: a negation leading the source changed), 66 (71: an opposite the source holds elsewhere), 67
    # (72: size, doubling and certainty as opposites), 68 (73: stance, price, departure and germ words as contrast
    # groups), 69 (74: market verbs of change, once/twice), 70 (75: rulings, ratings and rates), 71 (76:
    # casualties, roles in a crime, the subjects of a study), 72 (77: parties, materials, rooms, fuels, vehicles,
    # courts, positions, diseases), 73 (78: upstream/downstream, meals, diets, the poles, health workers, payment,
    # contact, written works, trades), 74 and 75 (79: colours, metals, instruments, sports, livestock, crops,
    # weather, organs, gases, power, faiths, waters, ...), 76 and 77 (80: disasters, treatments, times of day,
    # directions, matter, formats, weights, strokes, medicines), 81 to 83 (82: genres, drinks, meats, ranks,
    # crimes, family lines, animals, fabrics, kinds of state ...), 84 (83: grandchildren, acoustic/electric,
    # organic/synthetic, renewable/fossil), 87 and 88 (87: a function word or a phrase moved with a swapped word;
    # 86 was 87's first part, not kept), 89 and 90 (89: a name for a name leading a near copy; 88 was its first
    # rule, withdrawn), 91 (90: stages of a process, fields of study), 92 (91: outcomes, sources of a claim,
    # bounds), 93 (92: directions of a transfer, a time, a weight or a kin; its start/finish group left out, so
    # one swap misses), 94 (93: policy, economy and manner), 96 and 97 (96: travel, markets, food and play; 95,
    # with cheap/expensive too, was its first rule, not kept), 98 (97: offices, finance, places and roles; its
    # fixed/variable group left out, so one swap misses), 99 (98: tastes, health, leagues, budgets and traits),
    # 100 and 101 (101 and lexical 29: Roman numerals; 100 was the part of 99 and 100, not kept, and was seen
    # before 101), 102 (102: roles, property, schedules and care), 103 (103: stages, kinds and places), 104 (104:
    # evening and night one time), 105 (105 and lexical 30: a ruler's number written as an ordinal word), 106
    # (106: two numbers traded across clauses), 108 (108: multiples; part 107, for 107, not landed, is kept unread
    # in its own file), 109 (109: degrees and care roles), 110 (110: sport and court roles, hourly), 111 (113:
    # quantities, rounds and roles; its federal/state items, a group 113 lacks, miss; 111 and 112 not kept), 114
    # (114: care, change, rulings, genres, tenure), 115 (115: secrecy, harm, ownership, contests, water,
    # frequency, diet, authorship, votes), 116 (116: odds, trade, survival, extent, treaties, taxes, takeovers,
    # volcanoes, headings, growth, discipline, closure), 117 (117: politics, food, flight, justice, deals,
    # offices, art, roads, stars, rules, buildings, societies), 118 (118: the economy, contests, care, gems,
    # children, leases, crowds, recalls, records, storage, fees, shapes), 119 (119: markets, appeals, gifts,
    # trials, saves, trade, voices, forms, races, cells, stone, railways), 120 (120: currencies, solvency, votes,
    # crops, ice, custody, birds, species, projects, peoples, forests, thefts), 121 (121: votes, taxes, reactions,
    # microbes, drugs, rocks, regimes, constitutions, diseases, contracts, snakes), 122 (122: a "non-" added or
    # dropped), 123 (123: routes, orbits, optics, rock, prices, studies, trials, shares, plants, thrones,
    # currencies), 124 (124: health, membership, grammar, release, monuments, appeals, paint, animals, debts,
    # number, timber, survival), 125 (125: secrets, systems, food, sentences, drinks, borders, sound, animals,
    # harvests, pay, hotels), 126 (126: pictures, seas, herbs, music, thrones, wine, paintings, couples, strokes,
    # land, glass, votes), 127 (127: cells, vessels, genomes, wounds, styles, columns, houses, roofs, cars, boats,
    # aircraft, markets), 128 (128: policy, mines, dances, poems, shows, lives, strings, horses, plants, trees,
    # galaxies, fossils), 129 (129: courts, surgery, doses, cooking, shoes, jackets, trainees, junctions, ships,
    # meat), 130 (130: schools, grids, batteries, bulbs, waste, clouds, eruptions, coasts, terms, wetlands,
    # watches, lighthouses), 131 (131: bonds, infections, paintings, courses, keyboards, tempi, sentences,
    # parliaments, troops, beers, fabrics, aircraft), 132 (132: loads, ranks, prints, newspapers, insects, food
    # webs, films, habitats, pastry, nuclear processes, cell division, shapes), 133 (133: missions, methods,
    # waves, reasoning, growth, angles, triangles, materials, mixtures, sugars, teeth, strokes), 134 (134:
    # kinship, grammar, valleys, finishes, images, recordings, ceramics, variables, evidence, bridges, solar
    # panels, antibiotics), 135 (135: winds, aircraft, branches of government, golf scores, bowlers, throws, dogs,
    # injections, care, flights, doping), 136 (136: cells, symbioses, mammals, reptiles, the deep sea, plate
    # boundaries, igneous rock, policy, unemployment, soldiers, telescopes, fish), 137 (137: poems, funerals,
    # lawyers, disputes, firearms, warships, paddling, boat engines, antibodies, specialists, cancer, immunity),
    # 138 (138: instruments, church music, recitals, organ pieces, choral works, comedy, reviews, puzzles, toys,
    # rivers, court orders, minerals), 140 (140: big cats, large mammals, apes, reptiles, amphibians, field
    # animals, sea mammals, stinging insects, birds of prey, river mammals, beasts of burden, moths), 141 (141:
    # fish, shellfish, crustaceans, insects, reptiles, water birds, space rocks, sinews, leg bones, the eye,
    # coffee, landforms), 142 (142: trees, flowers, fruit, vegetables, bread, cheese, herbs, spices, cloth,
    # blades, coastal waters, furniture), 143 (143: martial arts, board games, trades, houses, farm buildings,
    # kitchen appliances, shops, injuries, small vehicles, stationery, boats, jewellery), 144 (144: clothes,
    # footwear, digits, artworks, devices, cutlery, post, sky objects, containers, dishes, fast food, bakes), 145
    # (145: drinks, ages, lenses, wind, rain, hair, festival toys, tools, camping, titles, naval weapons, vigil
    # lights), 146 (146: musicians, writers, artists, professions, kitchen staff, snow sports, athletes, religious
    # orders, weddings, multiple births, elected members, ensembles), 147 (147: old buildings, ensembles by size,
    # army units, screen and music awards, aircraft, bridges, stage works, cars for hire, childhood infections,
    # blood cancers, ice and snow sports, court sports), 148 (148: garden, zoo and water birds, Australian and
    # farm-park animals, small mammals, young pets, dog breeds, folk instruments, things pushed, sea creatures,
    # insects); parts 85 and 86 (84 and 85: a change's direction reversed in a restatement; their restatements
    # paraphrase, so they have their own test below); parts 38, 39 (lexical 12, 45: not kept), 95 (94 and lexical
    # 28: clock times, not landed), 79 (81: not kept; its rule kept as 82, the part left out: its helper's
    # restatements paraphrase more freely, 9 of 12 pass before the rule as after) and parts 5, 10, 14, 16, 17, 21
    # and 28, 11's last 4, 25's first 6, 62 (8, 13, 17, 19, 20, 24, 14 B, 29, 30 A, 33 and unit rule 3: not kept)
    items = [json.loads(line) for line in CONTRASTS.read_text(encoding="utf-8").splitlines()]
    items = (items[:144] + items[180:324] + items[360:384] + items[396:468] + items[504:540] + items[612:720]
             + items[756:864] + items[882:972] + items[1008:1332] + items[1440:2196] + items[2232:2772]
             + items[2808:2952] + items[3024:3312] + items[3348:5112])
    flagged: dict[str, list[bool]] = {"s": [], "f": [], "c": []}
    for item in items:
        result = monitor.score(None, item["context"], item["response"])
        flagged[item["id"].rsplit("-", 1)[1]].append(any(s.flagged for s in result.sentences))
    assert len(flagged["s"]) == len(flagged["f"]) == len(flagged["c"]) >= 60
    assert sum(flagged["s"]) >= 0.9 * len(flagged["s"]), flagged["s"]
    assert sum(flagged["f"]) <= 0.1 * len(flagged["f"]) and sum(flagged["c"]) <= 0.1 * len(flagged["c"]), flagged


@pytest.mark.slow
def test_reversed_changes_in_restatements_are_flagged_and_their_controls_pass():
    """Parts 85 and 86 of training/data/contrast-check.jsonl (edits versions 84 and 85): a key sentence reporting a
    change by or to a number, restated in other words with the opposite direction (``-s``), and another context
    sentence copied (``-c``). The restatements with the same direction (``-f``) are not asserted: they paraphrase,
    and 6 of 24 are flagged before these rules as after (the NLI model's paraphrase misses, docs/transfer.md)."""
    import json

    from faithwatch.monitor import Monitor

    monitor = Monitor("none")  # as `faithwatch check` scores them
    items = [json.loads(line) for line in CONTRASTS.read_text(encoding="utf-8").splitlines()][2952:3024]
    assert {item["id"][:2] for item in items} == {"bz", "ca"}
    flagged = {kind: [any(s.flagged for s in monitor.score(None, i["context"], i["response"]).sentences)
                      for i in items if i["id"].endswith(f"-{kind}")] for kind in "sc"}
    assert len(flagged["s"]) == len(flagged["c"]) == 24
    assert sum(flagged["s"]) >= 22, flagged["s"]
    assert not any(flagged["c"]), flagged["c"]
