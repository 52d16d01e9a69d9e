"""`faithwatch proxy`: an OpenAI-compatible proxy that scores every sentence of a served model (docs/proxy.md)."""

from __future__ import annotations

import typer

from faithwatch.cli._common import (
    AllowedHostsOpt,
    DetectorOpt,
    DeviceOpt,
    DtypeOpt,
    LogLevelOpt,
    ThreadsOpt,
    allowed_hosts_for,
    check_listen,
    check_model_path,
    check_names,
    err,
    fail,
    float_option,
    group,
    refuse_unread,
)
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.params import default, help_of

app = group()


@app.command()
def proxy(
    ctx: typer.Context,
    upstream: str = typer.Option(..., "--upstream", help="Base URL of the OpenAI-compatible server to guard, "
                                 "e.g. http://localhost:8000/v1 (vLLM) or http://127.0.0.1:8080/v1 "
                                 "(faithwatch serve)."),
    upstream_model: str | None = typer.Option(None, "--upstream-model", help="Model name sent upstream when a "
                                              "request names none."),
    upstream_key: str | None = typer.Option(None, "--upstream-key", envvar="FAITHWATCH_UPSTREAM_KEY",
                                            show_envvar=True, help="API key for the upstream (Bearer)."),
    model: str = typer.Option("embedded", "--model", "-m", help="The local white-box copy that scores each "
                              "sentence: the embedded SmolLM2-135M ('embedded'), an HF causal LM dir or hub id "
                              "(the upstream's model, or a smaller surrogate), or 'none' for model-free signals "
                              "only (alignment, lexical, edits, tagger, api)."),
    policy: str = typer.Option("annotate", "--policy", help="annotate: pass everything through with scores | "
                               "abstain: stop at the first flagged sentence and refuse | fod: backtrack and "
                               "search for faithful sentences over the upstream."),
    detector: str | None = DetectorOpt,
    alignment: str = typer.Option("auto", "--alignment", help="Alignment scorer (default: the detector's)."),
    threshold: float | None = float_option(None, "--threshold", min=0.0, max=1.0, help="annotate/abstain: flag "
                                           "below this (default: the detector's)."),
    tau1: float | None = float_option(None, "--tau1", min=0.0, max=1.0, help="fod: backtrack below this "
                                      "(default: the detector's threshold)."),
    tau2: float | None = float_option(None, "--tau2", min=0.0, max=1.0, help="fod: prune candidates below this "
                                      "(default: the detector's threshold)."),
    beams: int = typer.Option(2, "--beams", min=1, help="fod: beams kept (K)."),
    samples: int = typer.Option(6, "--samples", min=1, help="fod: continuations per step (S)."),
    temperature: float = float_option(0.7, "--temperature", min=0.0, help="fod: sampling temperature of the "
                                      "continuations."),
    no_repeat: bool = typer.Option(default("no_repeat"), "--no-repeat/--allow-repeat", help=help_of("no_repeat")),
    continuation: str = typer.Option("continue", "--continuation", help="fod: 'continue' sends the faithful prefix "
                                     "as a partial assistant message (continue_final_message, as vLLM); "
                                     "'reprompt' asks in a user message, for upstreams that cannot continue."),
    logprobs: bool = typer.Option(False, "--logprobs", help="Ask the upstream for log-probabilities (top 5) for "
                                  "the black-box api_* features (without it, they come from the requests whose "
                                  "client asks for log-probabilities)."),
    markers: str = typer.Option("<context>,</context>", "--markers", help="Start and end marker of the context "
                                "inside the system or last user message, comma-separated."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8081, "--port", min=0, max=65535, help="TCP port."),
    timeout: float = float_option(60.0, "--timeout", min=0.1, help="Seconds to wait for the upstream (to connect, "
                                  "and between two streamed chunks)."),
    retries: int = typer.Option(2, "--retries", min=0, help="Retries on connection errors, 429 and 5xx."),
    api_key: str | None = typer.Option(None, "--api-key", envvar="FAITHWATCH_API_KEY", show_envvar=True,
                                       help="Require 'Authorization: Bearer KEY' from clients."),
    allowed_hosts: str | None = AllowedHostsOpt,
    device: str | None = DeviceOpt,
    dtype: str | None = DtypeOpt,
    threads: int | None = ThreadsOpt,
    log_level: str = LogLevelOpt,
) -> None:
    """Serve an OpenAI-compatible /v1/chat/completions in front of --upstream; every sentence of every answer is
    scored (a 'faithwatch' field on the chunks), and the policy can stop or steer unfaithful answers."""
    try:  # a mistyped folder is answered before the server and model stacks are imported (seconds)
        check_names(detector=detector, alignment=alignment)
        check_model_path(model)
    except FaithwatchError as exc:  # a missing model folder of --alignment too
        raise fail(exc) from None
    try:
        import uvicorn

        from faithwatch.proxy import POLICIES, POLICY_READS, ProxySettings, Upstream, create_proxy_app
        from faithwatch.server.limits import check_api_key
    except ImportError as exc:
        raise fail(InputError(f"`faithwatch proxy` needs fastapi and uvicorn ({exc}): pip install "
                              "'faithwatch[server]'")) from None
    from faithwatch.models.folders import is_no_model
    from faithwatch.monitor import Monitor

    if policy not in POLICIES:
        raise fail(InputError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}"))
    try:
        others = {name for reads in POLICY_READS.values() for name in reads} - set(POLICY_READS[policy])
        refuse_unread(ctx, others, f"--policy {policy}", POLICY_READS[policy], "choose a policy")
        check_api_key(api_key)  # before the model loads
    except FaithwatchError as exc:
        raise fail(exc) from None
    marks = [m for m in markers.split(",")]
    if len(marks) != 2 or not all(m.strip() for m in marks):
        raise fail(InputError(f"--markers needs a start and an end marker separated by a comma, got {markers!r}"))
    try:
        settings = ProxySettings(policy=policy, threshold=threshold, tau1=tau1, tau2=tau2, beams=beams,
                                 samples=samples, temperature=temperature, continuation=continuation,
                                 logprobs=logprobs, no_repeat=no_repeat)
        client = Upstream(upstream, api_key=upstream_key, model=upstream_model, timeout=timeout, retries=retries)
    except ValueError as exc:
        raise fail(InputError(str(exc))) from None
    hosts = allowed_hosts_for(allowed_hosts, host)
    try:
        check_listen(host, port)  # the last check before the model: uvicorn found a port in use once it had loaded
    except InputError as exc:
        raise fail(exc) from None
    from faithwatch.signals import default_signals, model_free_signals

    families = model_free_signals() if is_no_model(model) else default_signals()  # none: what reads text only
    signals = [*dict.fromkeys([*families, "api"])]  # api_* features wherever the upstream sends log-probabilities
    try:
        with err.status("Loading the local model…", spinner="dots"):
            local = None if model == "embedded" else model
            monitor = Monitor(local, detector=detector, alignment=alignment, device=device,
                              dtype=dtype, signals=signals)
        application = create_proxy_app(monitor, client, settings, markers=marks, api_key=api_key,
                                       allowed_hosts=hosts)
    except FaithwatchError as exc:
        raise fail(exc) from None
    if monitor.model_unread:
        err.print(f"[dim]The detector {monitor.detector.name} reads text signals only; --model none skips the local "
                  "model (the same verdicts, about half the scoring time per sentence: docs/proxy.md).[/]")
    err.print(f"faithwatch proxy on http://{host}:{port}/v1 -> {upstream} (policy {policy}; scoring with "
              f"{monitor.model_id}, detector {monitor.detector.name}, threshold {monitor.threshold:.3f})")
    uvicorn.run(application, host=host, port=port, log_level=log_level)
