"""Hand-off commands: `reverie handoff create|read|list`.

    reverie handoff create PATH --from A --to B --target TEXT --why TEXT [--done X ...] [--constraint X ...]
        [--failed X ...] [--state TEXT] [--success TEXT] [--until TEXT] [--task ID]
        a packet for handing a task from agent A to agent B; what is not given is taken from
        progress.md (the anchor). A packet that would send a task back to an agent that already
        handed it on is refused.
    reverie handoff read PATH ID [--json]   the packet as the receiving agent's opening context
    reverie handoff list PATH               every packet, oldest first
"""
from __future__ import annotations

import json


CREATE_OPTIONS = (
    ("--from", {"dest": "from_agent", "required": True, "help": "the agent handing the task on"}),
    ("--to", {"dest": "to_agent", "required": True, "help": "the agent taking it"}),
    ("--target", {"default": "", "help": "the original target (default: progress.md's goal)"}),
    ("--why", {"required": True, "help": "why this agent"}),
    ("--done", {"action": "append", "default": [], "help": "completed work (repeatable)"}),
    ("--constraint", {"action": "append", "default": [], "help": "a known constraint (repeatable)"}),
    ("--failed", {"action": "append", "default": [], "help": "a failed attempt (repeatable)"}),
    ("--state", {"default": "", "help": "the current state (default: progress.md)"}),
    ("--success", {"default": "", "help": "the success criteria"}),
    ("--until", {"default": "", "help": "the termination condition"}),
    ("--task", {"default": "", "help": "task id (default: the target)"}),
)


def register(sub) -> None:
    p = sub.add_parser("handoff", help="create, read or list hand-off packets between agents")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    q = verbs.add_parser("create", help="write a hand-off packet (refused when it would loop)")
    q.add_argument("path", help="the workspace")
    for flag, options in CREATE_OPTIONS:
        q.add_argument(flag, **options)
    q.set_defaults(func=cmd_create)
    q = verbs.add_parser("read", help="print a packet as the receiving agent's opening context")
    q.add_argument("path", help="the workspace")
    q.add_argument("handoff", help="a hand-off id (ho-...)")
    q.add_argument("--json", action="store_true", help="the stored JSON instead")
    q.set_defaults(func=cmd_read)
    q = verbs.add_parser("list", help="list hand-off packets")
    q.add_argument("path", help="the workspace")
    q.set_defaults(func=cmd_list)


def _open(path: str):
    from core.workspace import Workspace

    return Workspace.open(path)


def cmd_create(args) -> int:
    from core.errors import FormatError
    from core.harness.anchor import AnchorStore
    from core.harness.handoff import build_packet

    ws = _open(args.path)
    anchor = AnchorStore(ws).load()
    packet = build_packet(from_agent=args.from_agent, to_agent=args.to_agent, target=args.target, why=args.why,
                          anchor=anchor, completed=list(args.done), failed=list(args.failed),
                          constraints=list(args.constraint), success_criteria=args.success,
                          termination_condition=args.until)
    if args.state:
        packet["current_state"] = args.state
    if not packet["original_target"]:
        raise FormatError("no target: give --target, or set a goal in progress.md (`reverie progress --goal`)")
    record, _changes = ws.create_handoff(packet, args.task or None)
    print(f"created {record['id']}: {record['from_agent']} -> {record['to_agent']}, task {record['task_id']!r}, "
          f"hop {record['hop']} ({ws.relative(ws.paths.handoff(record['id']))})")
    return 0


def cmd_read(args) -> int:
    from core.harness.handoff import packet_as_context

    ws = _open(args.path)
    record = ws.read_handoff(args.handoff)
    print(json.dumps(record, ensure_ascii=False, indent=2) if args.json else packet_as_context(record))
    return 0


def cmd_list(args) -> int:
    ws = _open(args.path)
    packets = ws.handoffs()
    if not packets:
        print("no hand-offs")
    for p in packets:
        print(f"{p.get('id', '?')}  {p.get('created', '')}  {p.get('from_agent', '?')} -> {p.get('to_agent', '?')}  "
              f"hop {p.get('hop', '?')}  task {p.get('task_id', '')!r}")
    return 0
