"""Run any ``faithwatch`` command with question coverage's next-sentence allowance limited to sentences that refer
back (``coverage_refer_back.offers_refer_back``), for the fresh15 rule (training/data/README.md). Scratch: the
variant is patched in for this process only; the library is unchanged unless the rule passes.

    PYTHONPATH=training/experiments python training/experiments/refer_back_run.py eval-decoding --data ... --report ...
"""

from __future__ import annotations

import sys

from coverage_refer_back import offers_refer_back

from faithwatch.cli import run
from faithwatch.decoding import coverage as cov

if __name__ == "__main__":
    cov._offers = offers_refer_back
    sys.argv = ["faithwatch", *sys.argv[1:]]
    run()
