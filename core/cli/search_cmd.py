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
            index = ws.index
            pending = index.status().pending_embeddings
            if pending:
                print(f"embedding {pending} line(s)...", file=sys.stderr)
            if not index.wait_embeddings():
                for problem in index.status().problems:
                    print(f"warning: {problem}", file=sys.stderr)
        status = ws.index.status()
        print(f"index: {status.files} file(s), {status.lines} line(s), {status.vectors} vector(s), "
              f"{status.pending_embeddings} pending")
    return 0


def cmd_search(args) -> int:
    with _open(args.path) as ws:
        if (args.mode or ws.settings.search.default_mode) in ("fts", "keyword"):
            ws.keyword_only_index()     # a read-only keyword search never waits for the embedder
        report = ws.sync_index()
        for problem in report.problems:
            print(f"warning: {problem}", file=sys.stderr)
        from core.index.filters import SearchFilter
        from core.index.matching import explain
        from core.index.search import canonical_mode

        mode = canonical_mode(args.mode, ws.settings.search.default_mode)
        scope = SearchFilter.of(args.kind, args.since, args.until)   # a bad kind or date: one line, before waiting
        if mode in ("meaning", "hybrid") and args.wait > 0:
            ws.index.wait_embeddings(timeout=args.wait)
        results = ws.search(args.query, k=args.k, mode=mode, kinds=scope.kinds, since=scope.since, until=scope.until)
        if args.json:
            print(json.dumps({"query": args.query, "mode": results.mode, "pending_embeddings": results.pending_embeddings,
                              "hits": [h.as_dict() for h in results.hits]}, ensure_ascii=False, indent=1))
            return 0
        if results.pending_embeddings:
            print(f"note: {results.pending_embeddings} line(s) not embedded yet; results are from what is indexed",
                  file=sys.stderr)
        if not results.hits:
            print(f"no results for {args.query!r}")
        from core.store.textio import escape_controls

        for hit in results.hits:
            source = f"  [from {', '.join(hit.sources)}]" if hit.sources else ""
            print(escape_controls(f"{hit.path}:{hit.line}: {hit.snippet}  ({explain(hit)}){source}",
                                  keep=chr(9)))  # no ESC to the terminal
    return 0

