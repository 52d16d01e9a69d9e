"""`faithwatch serve`: the HTTP API and web page (FastAPI + uvicorn; see faithwatch.server)."""

from __future__ import annotations

import typer
from rich.markup import escape

from faithwatch.alignment import CHECK_SCORER, plain_specs
from faithwatch.cli._common import (
    AllowedHostsOpt,
    CudaGraphOpt,
    DeviceMapOpt,
    DeviceOpt,
    DtypeOpt,
    InstructionOpt,
    LogLevelOpt,
    SignalsOpt,
    StaticCacheOpt,
    allowed_hosts_for,
    check_listen,
    check_model_path,
    check_names,
    cuda_graph_note,
    err,
    fail,
    float_option,
    group,
    instruction_kwargs,
    signal_list,
)
from faithwatch.errors import FaithwatchError, InputError

app = group()



@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 exposes it)."),
    port: int = typer.Option(8080, "--port", min=0, max=65535, help="TCP port (0: any free port)."),
    model: str | None = typer.Option(None, "--model", "-m", help="HF causal LM dir or hub id (default: "
                                     "embedded SmolLM2-135M)."),
    detector: str | None = typer.Option(None, "--detector", help="heuristic, default (the shipped detector), or "
                                        "a detector folder (if left out: the shipped one for the embedded model)."),
    alignment: str = typer.Option("auto", "--alignment", help="Monitor alignment scorer (default: the "
                                  "detector's)."),
    check_alignment: str = typer.Option(CHECK_SCORER, "--check-alignment", help="Default scorer of /v1/check's "
                                        f"alignment checker: {' | '.join(plain_specs())}."),
    check_checker: str | None = typer.Option(None, "--check-checker", help="Default checker of /v1/check: "
                                             "detector (the served detector's verdict; it must read text only) "
                                             "or alignment (--check-alignment, thresholded). Default: detector "
                                             "where the served detector reads text only, else alignment."),
    truncate_context: bool = typer.Option(False, "--truncate-context", help="Cut a context's tail to fit the "
                                          "model instead of answering 413."),
    queue_size: int = typer.Option(8, "--queue-size", min=0, help="Jobs that may wait for a worker; beyond "
                                   "that: 503 with Retry-After."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker threads (model calls are serialised; extra "
                                "workers serve /v1/check meanwhile)."),
    batch_rows: int = typer.Option(16, "--batch-rows", min=1, help="Concurrent /v1/monitor streams and "
                                   "greedy/abstain/cad/adacad /v1/generate requests decoded together as rows of one "
                                   "batch (continuous batching); 1: one at a time."),
    max_body_bytes: int = typer.Option(1_000_000, "--max-body-bytes", min=1, help="Larger bodies: 413."),
    max_context_tokens: int | None = typer.Option(None, "--max-context-tokens", min=1, help="Longer contexts: "
                                                  "413 (default: only the model window limits them)."),
    max_new_tokens: int = typer.Option(512, "--max-new-tokens", min=1, help="Most new tokens a request may "
                                       "ask for."),
    timeout: float = float_option(120.0, "--timeout", min=0.1, help="Seconds per request (504, or an error "
                                  "event on a stream)."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="torch CPU threads (default: torch's)."),
    device: str | None = DeviceOpt,
    dtype: str | None = DtypeOpt,
    device_map: str | None = DeviceMapOpt,
    static_cache: bool = StaticCacheOpt,
    cuda_graph: bool = CudaGraphOpt,
    signals: str | None = SignalsOpt,
    log_level: str = LogLevelOpt,
    api_key: str | None = typer.Option(None, "--api-key", envvar="FAITHWATCH_API_KEY", show_envvar=True,
                                       help="Require 'Authorization: Bearer KEY' on every /v1/* route (401 "
                                       "otherwise); /, /healthz and /docs stay open. Prefer the environment "
                                       "variable: a command line is visible to other users."),
    allowed_hosts: str | None = AllowedHostsOpt,
    instruction: str | None = InstructionOpt,
) -> None:
    """Serve the HTTP API (/v1/monitor as Server-Sent Events, /v1/score, /v1/generate, /v1/check, /healthz,
    /docs) and the web page at /."""
    try:  # a mistyped folder is answered before the server and model stacks are imported (seconds)
        check_names(detector=detector, alignment=alignment)
        families = signal_list(signals)
        check_model_path(model)
    except FaithwatchError as exc:  # a missing model folder of --alignment too
        raise fail(exc) from None
    try:
        import uvicorn

        from faithwatch.server import create_app
        from faithwatch.server.limits import check_api_key
    except ImportError as exc:
        raise fail(InputError(f"`faithwatch serve` needs fastapi and uvicorn ({exc}): pip install "
                              "'faithwatch[server]'")) from None
    import torch

    from faithwatch.monitor import Monitor
    from faithwatch.server.routes_claims import CHECKERS

    if check_checker is not None and check_checker not in CHECKERS:  # before the model loads
        raise fail(InputError(f"--check-checker must be one of {', '.join(CHECKERS)}, got {check_checker!r}"))
    if check_alignment not in plain_specs():  # create_app says so too, once the model has loaded
        raise fail(InputError(f"--check-alignment must be one of {', '.join(plain_specs())}, got "
                              f"{check_alignment!r}"))
    try:
        check_api_key(api_key)  # before the model loads
    except FaithwatchError as exc:
        raise fail(exc) from None
    try:
        told = instruction_kwargs(instruction)  # a request's own "instruction" replaces it
    except InputError as exc:
        raise fail(exc) from None
    hosts = allowed_hosts_for(allowed_hosts, host)
    try:
        check_listen(host, port)  # the last check before the model: uvicorn found a port in use once it had loaded
    except InputError as exc:
        raise fail(exc) from None
    if threads:
        torch.set_num_threads(threads)
    try:
        with err.status("Loading model…", spinner="dots"):
            monitor = Monitor(model, detector=detector, alignment=alignment, truncate_context=truncate_context,
                              device=device, dtype=dtype, device_map=device_map, static_cache=static_cache,
                              cuda_graph=cuda_graph, signals=families,
                              max_new_tokens=min(256, max_new_tokens), **told)
        cuda_graph_note(monitor, cuda_graph)
        application = create_app(
            monitor, max_body_bytes=max_body_bytes, max_context_tokens=max_context_tokens,
            max_new_tokens=max_new_tokens, queue_size=queue_size, workers=workers, batch_rows=batch_rows,
            request_timeout_s=timeout,
            check_alignment=check_alignment, check_checker=check_checker, api_key=api_key, allowed_hosts=hosts,
        )
    except FaithwatchError as exc:
        raise fail(exc) from None
    err.print(f"faithwatch serving {monitor.lm.model_id} on http://{host}:{port} (docs: /docs; queue "
              f"{queue_size}, workers {workers}, "
              f"{f'live batch of {batch_rows} rows' if batch_rows > 1 else 'no live batch: one request at a time'})")
    err.print(f"API key: {'required on /v1/* (browser: open /login once)' if api_key else 'none'}; Host names: "
              f"{escape(', '.join(hosts)) if hosts else 'any'}")
    if api_key is None and hosts is None:
        err.print("[yellow]warning:[/] the server listens beyond this machine without an API key; anyone who "
                  "can reach it can use it (--api-key or FAITHWATCH_API_KEY)")
    uvicorn.run(application, host=host, port=port, log_level=log_level)
