"""``faithwatch proxy``: an OpenAI-compatible proxy that scores, and can steer, every sentence of a served model.

See docs/proxy.md. :func:`create_proxy_app` builds the app; :class:`ProxySettings` holds the policy
(``annotate``, ``abstain`` or ``fod``) and its thresholds; :class:`Upstream` talks to the served model.
"""

from faithwatch.proxy.app import create_proxy_app
from faithwatch.proxy.policies import POLICIES, POLICY_READS, ProxySettings
from faithwatch.proxy.request import DEFAULT_MARKERS, split_request
from faithwatch.proxy.upstream import Upstream, UpstreamError

__all__ = ["DEFAULT_MARKERS", "POLICIES", "POLICY_READS", "ProxySettings", "Upstream", "UpstreamError",
           "create_proxy_app", "split_request"]
