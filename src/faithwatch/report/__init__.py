"""Self-contained HTML reports: one monitored / decoded response, one claim-checked response, or one dataset
evaluation.

Both pages are single files with inline CSS, inline JavaScript and images embedded as ``data:`` URIs, so they
open offline (no network at view time). Templates are jinja2, shipped as package data, with autoescaping on.
"""

from __future__ import annotations

from faithwatch.report.claims import claims_html, write_claims_html
from faithwatch.report.dataset import dataset_html, write_dataset_html
from faithwatch.report.response import response_html, write_response_html

__all__ = ["claims_html", "dataset_html", "response_html", "write_claims_html", "write_dataset_html",
           "write_response_html"]
