"""Text helpers shared by the runtime and the reports, one module per kind of text:

* :mod:`~faithwatch.text.sentences`: the one pysbd wrapper (sentence spans), repeated sentences, passages cut to a
  budget;
* :mod:`~faithwatch.text.words`: stop words and stemming;
* :mod:`~faithwatch.text.numbers`: numbers in words, shares, magnitudes, bounds, year ranges, months, normal forms;
* :mod:`~faithwatch.text.units`: quantities with units and conversions;
* :mod:`~faithwatch.text.markup`: answer preambles, markup, framing lines, the words of what a user asked;
* :mod:`~faithwatch.text.transcripts`: chat and meeting transcripts;
* :mod:`~faithwatch.text.language`: text in another language than English;
* :mod:`~faithwatch.text.visible`: whether text shows anything at all.

Their public names are importable from ``faithwatch.text`` itself.
"""

from __future__ import annotations

from faithwatch.text.language import language_note, other_language
from faithwatch.text.markup import (
    FRAMING_RULE,
    MARKUP_RULE,
    asked,
    is_framing,
    preamble_end,
    question_support,
    strip_marks,
    strip_markup,
    strip_preamble,
)
from faithwatch.text.numbers import (
    BOUND_RATIO,
    BOUND_WORDS,
    CURRENCY_WORDS,
    MAGNITUDES,
    MAX_RANGE_YEARS,
    MONTH_ABBREVIATIONS,
    NEAR_SHARE,
    NUMBER_AFTER,
    NUMBER_RE,
    NUMBER_WORDS,
    SMALL_NUMBER_WORDS,
    SPELLED_RULE,
    TENS,
    WORD_VALUES,
    bound_before,
    bounded_quantities,
    digits_for_words,
    join_decimals,
    join_thousands,
    month_name,
    normalise_number,
    number_forms,
    number_unit_spans,
    number_value,
    ordinals_in_digits,
    quantities,
    regnal_ordinals,
    roman_numerals,
    roman_value,
    satisfies,
    scale_after,
    share_values,
    shares_as_percents,
    spaced_decimals,
    spelled_numbers,
    spelled_ordinals,
    spelled_shares,
    year_range_ends,
)
from faithwatch.text.sentences import (
    WORDISH,
    cut_passages,
    repeats,
    segmenter,
    sentence_spans,
    split_sentences,
    word_key,
)
from faithwatch.text.transcripts import (
    TRANSCRIPT_NOTE,
    is_transcript,
)
from faithwatch.text.units import (
    CONVERSION_TOLERANCE,
    SAME_QUANTITY_SHARE,
    Measure,
    amount_numbers,
    amounts,
    drop_conversions,
    measures,
    same_quantity,
)
from faithwatch.text.visible import INVISIBLE_CATEGORIES, is_blank
from faithwatch.text.words import (
    STOP_WORDS,
    is_stop,
    stem,
)

__all__ = [
    "BOUND_RATIO",
    "BOUND_WORDS",
    "CONVERSION_TOLERANCE",
    "CURRENCY_WORDS",
    "FRAMING_RULE",
    "INVISIBLE_CATEGORIES",
    "MAGNITUDES",
    "MARKUP_RULE",
    "MAX_RANGE_YEARS",
    "MONTH_ABBREVIATIONS",
    "NEAR_SHARE",
    "NUMBER_AFTER",
    "NUMBER_RE",
    "NUMBER_WORDS",
    "SAME_QUANTITY_SHARE",
    "SMALL_NUMBER_WORDS",
    "SPELLED_RULE",
    "STOP_WORDS",
    "TENS",
    "TRANSCRIPT_NOTE",
    "WORDISH",
    "WORD_VALUES",
    "Measure",
    "amount_numbers",
    "amounts",
    "asked",
    "bound_before",
    "bounded_quantities",
    "cut_passages",
    "digits_for_words",
    "drop_conversions",
    "is_blank",
    "is_framing",
    "is_stop",
    "is_transcript",
    "join_decimals",
    "join_thousands",
    "language_note",
    "measures",
    "month_name",
    "normalise_number",
    "number_forms",
    "number_unit_spans",
    "number_value",
    "ordinals_in_digits",
    "other_language",
    "preamble_end",
    "quantities",
    "question_support",
    "regnal_ordinals",
    "repeats",
    "roman_numerals",
    "roman_value",
    "same_quantity",
    "satisfies",
    "scale_after",
    "segmenter",
    "sentence_spans",
    "share_values",
    "shares_as_percents",
    "spaced_decimals",
    "spelled_numbers",
    "spelled_ordinals",
    "spelled_shares",
    "split_sentences",
    "stem",
    "strip_marks",
    "strip_markup",
    "strip_preamble",
    "word_key",
    "year_range_ends",
]
