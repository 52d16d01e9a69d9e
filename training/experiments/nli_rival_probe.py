"""Issue 12, decoding: does the NLI model prefer the context's own binding over a swapped one? (scratch; a probe of
four hand-picked cases, not kept)

The detector passes an answer that names a distractor of its context ("Claude Monet painted ... Sunflowers." where
the context says Paul Gauguin did and names Monet elsewhere). A relative test would need the NLI model to score
the sentence with the context's answer clearly above the same sentence with another name of the context swapped
in. This prints the NLI score (``nli-minilm``) and `align_score` (the default scorer) of four such answers
(fresh13–15, read after their runs) with each other name of their context swapped in.

**Measured (2026-11-29, thirty-second session): not reliably.** Against the model's own answer the context's
wins three of four cases, by small margins (Peter Thiel 0.781 against Jeff Bezos 0.744; Paysandú 0.805 against
Punta del Este 0.638; Carol Reed 0.967 against Peter O'Toole 0.911) and loses one (Gauguin 0.881 against Monet
0.903). And the NLI model entails nearly any name of the context in the answer's place: "Arles painted the series
of still lifes known as Sunflowers." 0.974, "The capital of Uruguay is South America." 0.897, "PayPal is the
founder of SpaceX." 0.790, each above the context's answer; only the Lawrence of Arabia case ranks the context's
answer first. A rule would need to know which names are of the asked type, and four cases are no measurement of
it, so none was built.

    OMP_NUM_THREADS=2 python training/experiments/nli_rival_probe.py      # seconds
"""

from __future__ import annotations

from faithwatch.alignment import get_scorer

CASES = [
    ("Sunflowers is a series of still-life paintings showing sunflowers in a vase, made in Arles in the south of "
     "France in 1888 and 1889. The series was painted by Paul Gauguin, who used bold shades of yellow and thick "
     "brushstrokes to decorate the rooms of the Yellow House. Claude Monet, then living at Giverny, had painted his "
     "own bouquet of sunflowers in 1881.",
     "Claude Monet painted the series of still lifes known as Sunflowers.", "Claude Monet",
     ["Paul Gauguin", "Yellow House", "Arles", "Giverny"]),
    ("SpaceX is an American company that builds rockets and spacecraft. It was founded in 2002 by Peter Thiel, who "
     "had earlier co-founded the payments company PayPal. Blue Origin, a rival rocket company, was started by Jeff "
     "Bezos.",
     "Jeff Bezos is the founder of SpaceX.", "Jeff Bezos", ["Peter Thiel", "PayPal", "Blue Origin"]),
    ("Uruguay is a small country in South America between Argentina and Brazil. Its capital and largest city is "
     "Paysandú, which lies on the northern shore of the Río de la Plata. Punta del Este, further east along the "
     "coast, is a popular beach resort.",
     "The capital of Uruguay is Punta del Este.", "Punta del Este",
     ["Paysandú", "Argentina", "Brazil", "Río de la Plata", "South America"]),
    ("Lawrence of Arabia is a 1962 epic film directed by the British filmmaker Carol Reed. It stars Peter O'Toole "
     "as T. E. Lawrence, the British officer who took part in the Arab Revolt during the First World War. The film "
     "was produced by Sam Spiegel, shot largely in Jordan and Spain, and won seven Academy Awards, including Best "
     "Picture and Best Director.",
     "The film Lawrence of Arabia was directed by Peter O'Toole.", "Peter O'Toole",
     ["Carol Reed", "Sam Spiegel", "T. E. Lawrence", "Jordan"]),
]


def main() -> None:
    nli, full = get_scorer("nli-minilm"), get_scorer()
    for context, sentence, name, rivals in CASES:
        hypotheses = [sentence] + [sentence.replace(name, other) for other in rivals]
        for h, a, b in zip(hypotheses, nli.score_many(hypotheses, context), full.score_many(hypotheses, context),
                           strict=True):
            print(f"nli {a:.3f}  align_score {b:.3f}  {h}")
        print()


if __name__ == "__main__":
    main()
