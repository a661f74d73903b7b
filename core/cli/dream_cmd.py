"""Dream commands: dream, proposals, why, maintain."""
from __future__ import annotations

import sys
from core.stage_bar import StageBar

SHOWN = 10          # not-proposed candidates listed by `proposals show`


def register(sub) -> None:
    p = sub.add_parser("dream", help="consolidate new daily logs and sessions into a MEMORY.md proposal")
    p.add_argument("path")
    p.add_argument("--dry-run", action="store_true", help="show the diff; write no proposal, keep the watermark")
    p.add_argument("--apply", action="store_true", help="apply the proposal at once unless a guard holds it")
    p.add_argument("--include-archive", action="store_true",
                   help="read archived logs (memory/archive/) too; a dream reads only live logs otherwise")
    _model_options(p)
    p.set_defaults(func=cmd_dream)

    p = sub.add_parser("proposals", help="list, show, apply or reject dream proposals")
    p.add_argument("path")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    a = actions.add_parser("list", help="open proposals (--all: every one)")
    a.add_argument("--all", action="store_true")
    a.set_defaults(func=cmd_proposals_list)
    a = actions.add_parser("show", help="a proposal's diff, changes, sources and hunks")
    a.add_argument("id")
    a.set_defaults(func=cmd_proposals_show)
    for name, func, verb in (("apply", cmd_proposals_apply, "apply"), ("reject", cmd_proposals_reject, "reject")):
        a = actions.add_parser(name, help=f"{verb} a proposal, or only some sections, hunks or changes of it")
        a.add_argument("id")
        a.add_argument("--section", action="append", default=[], help=f"{verb} this section's changes (repeatable)")
        a.add_argument("--hunk", action="append", default=[], help=f"{verb} this hunk, e.g. h2 (repeatable)")
        a.add_argument("--change", action="append", default=[], help=f"{verb} this change, e.g. c3 (repeatable)")
        if name == "apply":
            a.add_argument("--force", action="store_true", help="apply a held proposal (one a guard held for review)")
        a.set_defaults(func=func)

    p = sub.add_parser("why", help="where a MEMORY.md fact came from")
    p.add_argument("path")
    p.add_argument("bullet_id")
    p.set_defaults(func=cmd_why)

    p = sub.add_parser("maintain", help="run the maintenance tick now: archive, prune, dream when due, reindex")
    p.add_argument("path")
    p.add_argument("--dream", action="store_true", help="dream even if no gate is open")
    p.add_argument("--apply", action="store_true", help="apply the dream's proposal unless a guard holds it")
    _model_options(p)
    p.set_defaults(func=cmd_maintain)


def _model_options(p) -> None:
    from core.llm.cli_args import add_model_arguments

    add_model_arguments(p)      # --model, and --backend/--base-url/... for a model server the person runs
    p.add_argument("--no-model", action="store_true", help="decide every operation without a model")


def _open(path: str):
    from core.workspace import Workspace

    return Workspace.open(path)


def _llm(ws, args):
    if args.no_model:
        return None
    from core.errors import ModelError

    from core.llm.cli_args import model_settings

    settings = model_settings(args, ws.settings.model)
    try:
        from core.llm import open_client
    except ImportError as exc:
        raise ModelError(f"the local model engine is not available ({exc}); run with --no-model") from exc
    return open_client(settings)


def _print_result(result) -> None:
    print(f"dream: {result.status}: {result.reason}")
    stats = result.stats or {}
    if stats:
        print(f"  model calls {stats.get('model_calls', 0)}, fallbacks {stats.get('fallbacks', 0)}, "
              f"{stats.get('seconds', 0):.1f} s")
    for note in result.notes:
        print(f"  note: {note}")


def cmd_dream(args) -> int:
    from core.dream.pipeline.consolidator import run_dream

    ws = _open(args.path)
    llm = _llm(ws, args)
    try:
        result = run_dream(ws, llm, progress=StageBar(), dry_run=args.dry_run, apply=args.apply or None,
                           include_archive=args.include_archive)
    finally:
        if llm is not None:
            llm.close()
    _print_result(result)
    if args.dry_run and result.proposal is not None:
        sys.stdout.write(result.proposal.diff)
    elif result.proposal is not None:
        if result.applied is not None:
            print(f"applied to MEMORY.md (undo with `reverie undo {args.path}`)")
        elif result.held:
            print(f"held for review: reverie proposals {args.path} show {result.proposal.id}")
        else:
            print(f"review: reverie proposals {args.path} show {result.proposal.id}")
    return 0


def cmd_proposals_list(args) -> int:
    from core.dream.review.proposals import OPEN, list_proposals

    ws = _open(args.path)
    found = list_proposals(ws.paths, None if args.all else OPEN)
    if not found:
        print("no open proposals" if not args.all else "no proposals")
        return 0
    for proposal in found:
        open_left = len(proposal.undecided())
        held = f"  held: {'; '.join(proposal.hold_reasons)}" if proposal.status == "held" else ""
        print(f"{proposal.id}  {proposal.created}  {proposal.status:<8} {len(proposal.changes):>3} change(s), "
              f"{open_left} open{held}")
    return 0


def cmd_proposals_show(args) -> int:
    from core.dream.review.proposals import load_proposal, not_proposed_line

    ws = _open(args.path)
    proposal = load_proposal(ws.paths, args.id)
    print(f"proposal {proposal.id}  created {proposal.created}  status {proposal.status}")
    for reason in proposal.hold_reasons:
        print(f"  held: {reason}")
    summary = proposal.summary
    if summary:
        print(f"  read {len(summary.get('files_read', []))} of {summary.get('files_seen', 0)} daily logs, "
              f"{len(summary.get('sessions', []))} session(s); {summary.get('facts', 0)} facts, "
              f"{summary.get('new_facts', 0)} new")
    left = not_proposed_line(summary)
    if left:
        print(f"  {left} (they stay in the logs and in search):")
        for item in summary["not_proposed"][:SHOWN]:
            print(f"    {item.get('fact', '')[:100]}  [{', '.join(item.get('sources') or [])[:60]}]")
        if len(summary["not_proposed"]) > SHOWN:
            print(f"    ... and {len(summary['not_proposed']) - SHOWN} more")
    print()
    sys.stdout.write(proposal.diff)
    print("\nchanges:")
    for change in proposal.changes:
        decision = proposal.decisions.get(change.id, "open")
        print(f"  {change.id} [{decision}] {change.op} {change.kind} {change.bullet_id or '-'} "
              f"({change.section}): {change.reason}")
        for ref in change.sources if change.kind != "drop" else ():
            print(f"      src {ref}")
    print("\nhunks:")
    for hunk in proposal.hunks():
        print(f"  {hunk.id} ({hunk.section}): {', '.join(hunk.change_ids)}")
    return 0


def _selection(args) -> dict:
    return {"change_ids": tuple(args.change), "sections": tuple(args.section), "hunk_ids": tuple(args.hunk)}


def cmd_proposals_apply(args) -> int:
    from core.dream.review.apply import apply_proposal
    from core.dream.review.proposals import HELD, held_warning, load_proposal
    from core.dream.schedule.idle import record_person_writes

    ws = _open(args.path)
    proposal = load_proposal(ws.paths, args.id)
    if proposal.status == HELD and not args.force:
        # A held proposal is applied only on purpose: say why it waits and what it would take out.
        print(f"{held_warning(proposal, proposal.select(**_selection(args)))}; "
              f"apply it anyway with --force", file=sys.stderr)
        return 2
    result = apply_proposal(ws, args.id, reviewed=True, **_selection(args))
    record_person_writes(ws.paths, result.changes.paths)     # the person's accept: not agent activity
    how = {"append": " (rebased over an append)", "replay": " (rebased onto the current MEMORY.md)"}
    if result.wrote:
        print(f"applied {len(result.applied)} change(s) of {args.id} to MEMORY.md{how.get(result.rebased, '')}; "
              f"undo with `reverie undo {args.path}`")
    else:
        print(f"nothing to write: {len(result.already)} change(s) of {args.id} were already in MEMORY.md")
    print(f"proposal {args.id} is now {result.proposal.status} ({len(result.proposal.undecided())} change(s) open)")
    return 0


def cmd_proposals_reject(args) -> int:
    from core.dream.review.apply import reject_proposal

    ws = _open(args.path)
    proposal = reject_proposal(ws, args.id, **_selection(args))
    print(f"proposal {proposal.id} is now {proposal.status} ({len(proposal.undecided())} change(s) open)")
    return 0


def cmd_why(args) -> int:
    from core.dream.review.provenance import format_provenance, why

    ws = _open(args.path)
    print(format_provenance(why(ws, args.bullet_id)))
    return 0


def cmd_maintain(args) -> int:
    from core.dream.schedule.idle import IdleMonitor
    from core.dream.schedule.maintenance import maintain

    ws = _open(args.path)
    monitor = IdleMonitor(ws.paths, ws.settings.dream.idle_minutes)
    opened = []

    def open_model():
        opened.append(_llm(ws, args))
        return opened[-1]
    try:
        report = maintain(ws, llm_factory=open_model, monitor=monitor, force=True,
                          asked_dream=args.dream, progress=StageBar(), apply=args.apply or None)
    finally:
        for llm in opened:
            if llm is not None:
                llm.close()
    for rel in report.archived:
        print(f"archived {rel}")
    for rel in report.pruned:
        print(f"pruned {rel}")
    plan = report.plan
    if report.dream is not None:
        _print_result(report.dream)
    else:
        print(f"dream: not run ({plan.note or plan.dream.reason})")
    print("reindexed" if report.reindexed else "not reindexed")
    for note in report.notes:
        if note != plan.note:
            print(f"note: {note}")
    return 0
