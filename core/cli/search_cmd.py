"""Search commands: `reverie index PATH` and
`reverie search PATH QUERY [-k N] [--json] [--mode M] [--kind K] [--since DATE] [--until DATE]`."""
from __future__ import annotations

import json
import sys

MODES = ("keyword", "meaning", "hybrid", "fts", "vector")   # the last two: older names of the first two
KINDS_HELP = "memory, daily, session, handoff, checkpoint, progress, or tasks (hand-offs, checkpoints, progress.md)"


def register(sub) -> None:
    p = sub.add_parser("index", help="bring the search index up to date with the files (and embed new lines)")
    p.add_argument("path")
    p.add_argument("--no-embed", action="store_true", help="keyword index only; embeddings fill in later")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search the workspace's memory (hits are path:line)")
    p.add_argument("path")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="how many hits (default 10)")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="keyword (the words), meaning (similar sense) or hybrid (both; the default)")
    p.add_argument("--kind", action="append", default=[], metavar="KIND",
                   help=f"only lines of this kind (repeat or comma-separate): {KINDS_HELP}")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="only lines dated on or after this day")
    p.add_argument("--until", metavar="YYYY-MM-DD", help="only lines dated on or before this day")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.add_argument("--wait", type=float, default=120.0,
                   help="seconds to wait for pending embeddings before a vector/hybrid search (default 120)")
    p.set_defaults(func=cmd_search)


def _open(path: str):
    from core.workspace import Workspace

    return Workspace.open(path)


def cmd_index(args) -> int:
    with _open(args.path) as ws:
        report = ws.sync_index()
        for problem in report.problems:
            print(f"warning: {problem}", file=sys.stderr)
        print(f"indexed: {len(report.added)} new, {len(report.updated)} changed, {len(report.removed)} removed file(s); "
              f"{report.rows_written} line(s) written in {report.seconds:.2f} s")
        if not args.no_embed:
            from core.index.embed_progress import wait_with_progress

            index = ws.index
            pending = index.status().pending_embeddings
            if pending:
                print(f"embedding {pending:,} line(s); keyword search already answers "
                      f"(`reverie search --mode keyword`)", file=sys.stderr)
            if not wait_with_progress(index, lambda line: print(line, file=sys.stderr, flush=True)):
                for problem in index.status().problems:
                    print(f"warning: {problem}", file=sys.stderr)
        status = ws.index.status()
        print(f"index: {status.files} file(s), {status.lines} line(s), {status.vectors} vector(s), "
              f"{status.pending_embeddings} pending")
    return 0


def cmd_search(args) -> int:
    """Keyword search answers from SQLite here, without the model (torch is never imported). Meaning
    and hybrid ask a running `reverie serve` or app (search_socket.py) and load the model here only
    when none is alive. `--json` says which path answered ("via")."""
    from core.index.filters import SearchFilter
    from core.index.search import canonical_mode

    with _open(args.path) as ws:
        mode = canonical_mode(args.mode, ws.settings.search.default_mode)
        scope = SearchFilter.of(args.kind, args.since, args.until)   # a bad kind or date: one line, before waiting
        ws.keyword_only_index()     # the files are brought up to date here, without the model
        report = ws.sync_index()
        for problem in report.problems:
            print(f"warning: {problem}", file=sys.stderr)
        query = dict(k=args.k, mode=mode, kinds=scope.kinds, since=scope.since, until=scope.until)
        if mode == "keyword":
            results = ws.search(args.query, **query)
        else:
            results = _ask_running(ws, args.query, query) or _search_here(ws, args, query)
    _print(args, results)
    return 0


def _ask_running(ws, text: str, query: dict):
    """The results of the app or `reverie serve` running for this workspace, or None when none answers."""
    from core.index.embedder import EmbedderError, model_id_for
    from core.index.search import SearchResults
    from core.index.search_socket import ask

    try:
        _name, model = model_id_for(ws.settings.search.embedding_model)
    except EmbedderError:
        return None
    request = {"query": text, "model": model, **query, "kinds": list(query["kinds"]),
               "since": query["since"] and query["since"].isoformat(), "until": query["until"] and query["until"].isoformat()}
    reply = ask(ws.paths.private_dir, request)
    if not reply or not reply.get("ok"):
        return None
    return SearchResults.from_dict(reply["results"], via=str(reply.get("by") or "serve"))


def _search_here(ws, args, query: dict):
    """Meaning or hybrid in this process: the model loads here, pending lines are embedded (up to --wait)."""
    from core.index import SearchIndex

    with SearchIndex(ws.root, ws.paths.index_db, ws.settings.search) as index:
        if args.wait > 0:
            pending = index.status().pending_embeddings
            if pending:
                print(f"embedding {pending:,} line(s) first (at most {args.wait:g} s; "
                      f"`reverie serve` keeps them embedded)...", file=sys.stderr)
            index.wait_embeddings(timeout=args.wait)
        return index.search(args.query, **query)


def _print(args, results) -> None:
    from core.index.matching import explain
    from core.store.textio import escape_controls

    via = results.via or "keyword"
    if args.json:
        out = results.as_dict()
        out.update(query=args.query, via=via)
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return
    if results.pending_embeddings and results.mode != "keyword":
        print(f"note: {results.pending_embeddings:,} line(s) not embedded yet; meaning answers from what is",
              file=sys.stderr)

    def show(hit) -> None:
        source = f"  [from {', '.join(hit.sources)}]" if hit.sources else ""
        print(escape_controls(f"{hit.path}:{hit.line}: {hit.snippet or hit.text}  ({explain(hit)}){source}",
                              keep=chr(9)))  # no ESC to the terminal

    hits, nearby = results.hits, results.nearby
    for hit in hits:
        show(hit)
    if nearby:
        print(f"-- nearby: {len(nearby)} line(s) found through their neighbours' words (context, not hits) --")
        for hit in nearby:
            show(hit)
    answered = {"serve": " (answered by reverie serve)", "app": " (answered by the app)"}.get(via, "")
    if hits:
        print(f"{len(hits)} hit(s) for {args.query!r}, {results.mode}{answered}")
    else:
        print(f"no results for {args.query!r}{answered}")
