"""The bundled demo workspace: four weeks of an agent helping one person.

Written by us (English with some Chinese), generated relative to today so the
dates look current. It exercises every part of the layout: a curated MEMORY.md
whose provenance comments point at real daily-log lines, daily logs with flush
blocks, an archived log, session transcripts with tool calls and an evicted
result, checkpoints with a task graph, a hand-off, progress.md and AGENTS.md.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

from core.store.layout import write_files
from core.store.checkpoints import new_checkpoint_id
from core.store.paths import WorkspacePaths
from core.store.sessions import jsonl_line

# (day offset from the first day, time, text). "@name" marks a line that MEMORY.md cites.
DAYS: list[tuple[int, list[tuple[str, str, str]]]] = [
    (0, [("09:12", "Maya introduced herself: backend engineer at Lumen Labs, works from Lisbon (UTC+0/+1).", "@maya"),
         ("09:15", "Project: 'Orchard', a dashboard for a network of soil-moisture sensors on three farms.", "@orchard"),
         ("09:40", "Stack: Python 3.11, FastAPI, PostgreSQL 16 with TimescaleDB, React front end.", "@stack"),
         ("10:05", "Maya prefers small pull requests with one change each and tests in the same PR.", "@small_prs"),
         ("11:30", "Repository lives at ~/code/orchard; main branch is protected, CI on GitHub Actions.", "")]),
    (1, [("08:55", "Maya likes answers short and to the point; code first, explanation after.", "@short"),
         ("09:20", "Set up the dev database with docker compose; port 5433 because 5432 is taken by another project.", "@port"),
         ("14:10", "Sensor payloads arrive as MQTT messages every 5 minutes: {device_id, ts, moisture, temp, battery}.", "@payload"),
         ("16:45", "Failed attempt: pydantic v1 validators; the project pins pydantic 2.7, use field_validator.", "")]),
    (2, [("10:00", "Decision: store readings in a Timescale hypertable partitioned by day, compress after 7 days.", "@hypertable"),
         ("10:30", "Wrote migration 0003_readings_hypertable.sql and a test that inserts 10k rows.", ""),
         ("15:20", "与上海的同事陈伟开会：他负责传感器固件，每周四下午有同步会议。", "@chenwei"),
         ("15:40", "陈伟说固件版本 2.3 会把电池电压改成毫伏单位，需要在解析器里兼容两种单位。", "@millivolt")]),
    (3, [("09:05", "Maya drinks tea, not coffee; she joked that the office espresso machine is a trap.", "@tea"),
         ("11:15", "Implemented the MQTT ingest worker with aiomqtt; backpressure via a bounded asyncio queue (size 1000).", "@ingest"),
         ("17:30", "Open question: should alerts go to Slack or email? Maya will ask the farm managers.", "")]),
    (6, [("09:30", "Farm managers chose email alerts, with a daily digest at 07:00 local time; Slack is not used there.", "@alerts"),
         ("10:10", "Alert rule: moisture below 18% for two consecutive readings triggers a dry-soil alert.", "@dry_rule"),
         ("14:00", "Maya is away next Friday (dentist); no deploys that day.", "")]),
    (7, [("09:45", "Deployed v0.1 to the staging server staging.orchard.internal; smoke tests pass.", ""),
         ("11:20", "Bug: timestamps from device 17 are in local time instead of UTC; the firmware has a bug.", "@device17"),
         ("11:50", "Workaround: the parser converts naive timestamps from device 17 with Europe/Lisbon.", "")]),
    (8, [("10:00", "Maya prefers pytest fixtures over setUp methods and wants factories in tests/factories.py.", "@fixtures"),
         ("15:30", "今天帮 Maya 把测试覆盖率从 71% 提高到 84%，主要补了告警规则的边界测试。", "@coverage")]),
    (9, [("09:10", "Decision: use SQLAlchemy 2.0 Core, not the ORM, for the readings queries (speed, explicit SQL).", "@sqla"),
         ("13:40", "Query for the 30-day chart takes 2.4 s; added a continuous aggregate per hour: now 80 ms.", "@aggregate")]),
    (10, [("09:00", "Maya's manager is Priya Raman; quarterly review of Orchard on the last Tuesday of the month.", "@priya"),
          ("16:20", "Failed attempt: websockets for live charts overloaded the staging box; switched to polling every 60 s.", "@polling")]),
    (13, [("09:35", "New requirement: export readings as CSV per farm and date range, for the agronomist.", "@csv"),
          ("10:15", "Streaming CSV export implemented with a server-side cursor; 1M rows in 9 s, flat memory.", "")]),
    (14, [("09:20", "Maya switched her editor from VS Code to Helix; she wants config snippets in TOML.", "@helix"),
          ("11:00", "陈伟确认固件 2.3 已经推送到 40% 的设备，电池电压单位现在是毫伏。", "")]),
    (15, [("10:30", "Decision: authentication through the company's Keycloak (OIDC); no local passwords.", "@keycloak"),
          ("15:10", "Keycloak realm is 'lumen'; client id 'orchard-web'; redirect URI must be https.", "")]),
    (16, [("09:50", "Battery alert: warn at 3.4 V (3400 mV), critical at 3.2 V.", "@battery"),
          ("14:25", "Maya asked to never commit directly to main, even for typo fixes.", "@no_main")]),
    (17, [("09:15", "Staging disk filled up (logs); set up logrotate, keep 14 days compressed.", ""),
          ("16:40", "Postmortem note: disk alerts were missing; added a node-exporter disk rule at 80%.", "@disk")]),
    (20, [("10:00", "Quarterly review prep: Priya wants uptime, alert latency and the number of devices online.", ""),
          ("11:30", "Alert latency p95 is 42 s from reading to email; target is under 2 minutes.", "@latency")]),
    (21, [("09:40", "Maya prefers dark mode screenshots in the docs; she reads on a phone in the evening.", ""),
          ("13:15", "周四同步会：陈伟提议把上报间隔从 5 分钟改成 10 分钟以省电，Maya 同意先在一个农场试点。", "@interval")]),
    (22, [("09:05", "Started the multi-tenant work: each farm becomes a tenant with row-level security in Postgres.", "@rls"),
          ("15:50", "Failed attempt: RLS with a session variable broke the connection pool; fixed with SET LOCAL per transaction.", "@set_local")]),
    (23, [("10:20", "Production deploy planned for the first Monday of next month, 06:00 UTC, low traffic.", "@deploy"),
          ("11:00", "Runbook drafted in docs/runbook.md: rollback is 'helm rollback orchard 1'.", "")]),
    (24, [("09:30", "Maya will be on holiday from the 20th for two weeks; Jonas covers on-call for Orchard.", "@holiday"),
          ("14:45", "Jonas prefers written hand-offs with exact commands; he is new to TimescaleDB.", "@jonas")]),
    (27, [("09:10", "Pilot farm (Quinta do Vale) now reports every 10 minutes; battery drain down 35% in the first days.", ""),
          ("10:30", "Task in progress: tenant-aware CSV export; tests for tenant isolation still pending.", "")]),
]

FLUSHES = {  # day offset -> bullets a memory flush wrote at the end of that day's session
    2: ["Timescale hypertable partitioned by day; compression after 7 days (decided with Maya)."],
    9: ["Readings queries use SQLAlchemy 2.0 Core; hourly continuous aggregate for charts."],
    16: ["Never commit to main directly, even typo fixes."],
    22: ["Row-level security needs SET LOCAL per transaction with the connection pool."],
}

MEMORY_SECTIONS = [
    ("User profile", [("Maya is a backend engineer at Lumen Labs, based in Lisbon (UTC+0/+1)", "@maya", True),
                      ("Maya's manager is Priya Raman; Orchard quarterly review on the last Tuesday of the month", "@priya", False),
                      ("Colleague 陈伟 (Chen Wei, Shanghai) owns the sensor firmware; sync every Thursday afternoon", "@chenwei", False),
                      ("Jonas covers on-call while Maya is on holiday; he wants written hand-offs with exact commands", "@jonas", False)]),
    ("Preferences", [("Prefers short answers: code first, explanation after", "@short", True),
                     ("Prefers small pull requests with one change each and tests in the same PR", "@small_prs", False),
                     ("Drinks tea, not coffee", "@tea", False),
                     ("Prefers pytest fixtures and factories in tests/factories.py over setUp methods", "@fixtures", False),
                     ("Never commit directly to main, even for typo fixes", "@no_main", True),
                     ("Uses the Helix editor; wants config snippets in TOML", "@helix", False)]),
    ("Decisions", [("Readings live in a Timescale hypertable partitioned by day, compressed after 7 days", "@hypertable", False),
                   ("SQLAlchemy 2.0 Core (not the ORM) for readings queries", "@sqla", False),
                   ("Alerts go by email with a 07:00 daily digest; Slack is not used on the farms", "@alerts", False),
                   ("Authentication through the company Keycloak (OIDC), no local passwords", "@keycloak", False),
                   ("Live charts poll every 60 s; websockets overloaded staging", "@polling", False)]),
    ("Learnings", [("Device 17 sends local time instead of UTC; parser converts naive timestamps with Europe/Lisbon", "@device17", False),
                   ("固件 2.3 起电池电压单位是毫伏，解析器需兼容伏和毫伏", "@millivolt", False),
                   ("Row-level security with a pooled connection needs SET LOCAL per transaction", "@set_local", False),
                   ("Hourly continuous aggregate cut the 30-day chart query from 2.4 s to 80 ms", "@aggregate", False)]),
    ("Projects", [("Orchard: soil-moisture dashboard for three farms (FastAPI, PostgreSQL 16 + TimescaleDB, React)", "@orchard", False),
                  ("Dev database runs on port 5433 (5432 is taken)", "@port", False),
                  ("Production deploy: first Monday of next month, 06:00 UTC", "@deploy", False)]),
]


def _session(day: dt.date, sid: str, task: str, steps: list[tuple[str, str, str]], big_result: str | None = None):
    """Messages of one session: user task, then (tool, args, result) steps, then a closing answer."""
    base = dt.datetime.combine(day, dt.time(9, 0), tzinfo=dt.timezone.utc)
    messages = [{"role": "system", "content": "You are Orchard's coding agent. Use the memory tools."},
                {"role": "user", "content": task}]
    for number, (tool, args, result) in enumerate(steps, start=1):
        call_id = f"call_{sid}_{number}"
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [{"id": call_id, "type": "function",
                                         "function": {"name": tool, "arguments": args}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "name": tool, "content": result})
    if big_result:
        messages.append({"role": "assistant", "content": "", "tool_calls": [{
            "id": f"call_{sid}_log", "type": "function",
            "function": {"name": "run_shell", "arguments": json.dumps({"cmd": "journalctl -u orchard-ingest"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{sid}_log", "name": "run_shell", "content": big_result})
    messages.append({"role": "assistant", "content": f"Done: {task.rstrip('.')}. Tests pass."})
    for offset, message in enumerate(messages):
        message["ts"] = (base + dt.timedelta(minutes=3 * offset)).isoformat()
    return messages


def write_demo(target: Path, today: dt.date | None = None) -> str:
    today = today or dt.date.today()
    first = today - dt.timedelta(days=28)
    paths = WorkspacePaths(target.resolve())
    for folder in paths.layout_dirs():
        folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes | str] = {}

    def put(path: Path, data: bytes | str) -> None:
        files[paths.relative(path)] = data

    cited: dict[str, str] = {}   # "@name" -> "memory/DATE.md#Ln"
    n_lines = 0
    for offset, entries in DAYS:
        day = first + dt.timedelta(days=offset)
        rel = f"memory/{day.isoformat()}.md"
        lines = [f"# {day.isoformat()}", ""]
        for time, text, mark in entries:
            lines.append(f"- [{time}] {text}")
            if mark:
                cited[mark] = f"{rel}#L{len(lines)}"
        if offset in FLUSHES:
            lines += ["", f"## Memory Flush — {day.isoformat()}T18:00:00+00:00"]
            lines += [f"- {bullet}" for bullet in FLUSHES[offset]]
        put(paths.root / rel, "\n".join(lines) + "\n")
        n_lines += len(lines)

    old = first - dt.timedelta(days=120)
    put(paths.archive_dir / f"{old.isoformat()}.md",
                 f"# {old.isoformat()}\n\n- [10:00] First contact: Maya evaluated three agent memory tools.\n"
                 f"- [10:20] She chose plain markdown files because she can read and diff them.\n")

    out = ["# MEMORY", "", "Curated long-term memory for Orchard's coding agent. One fact per bullet.", ""]
    for title, bullets in MEMORY_SECTIONS:
        out.append(f"## {title}")
        for text, mark, pinned in bullets:
            ident = "m-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
            flags = " pin" if pinned else ""
            out.append(f"- {text} <!-- id:{ident} src:{cited[mark]}{flags} -->")
        out.append("")
    put(paths.memory_md, "\n".join(out))

    log_lines = "\n".join(
        f"{today.isoformat()}T06:{m % 60:02d}:{m % 57:02d}Z ingest[812]: device={m % 48} moisture={20 + m % 17}.{m % 10}% "
        f"temp={11 + m % 9}.{m % 7}C battery={3300 + (m * 7) % 500}mV queue={m % 1000}" for m in range(1400))
    sessions = [
        (first + dt.timedelta(days=2), "s-0003-hypertable", "Create the readings hypertable migration and a test.",
         [("read_file", '{"path": "migrations/0002_devices.sql"}', "CREATE TABLE devices (id int primary key, farm text);"),
          ("write_file", '{"path": "migrations/0003_readings_hypertable.sql"}', "written 38 lines"),
          ("run_tests", '{"args": "tests/test_migrations.py"}', "4 passed in 2.31s")], None),
        (first + dt.timedelta(days=17), "s-0018-disk", "Find out why staging ingest stopped overnight.",
         [("run_shell", '{"cmd": "df -h /var"}', "/dev/sda1  40G  40G  0  100% /var"),
          ("memory_search", '{"query": "staging disk logs"}', "memory/ (no earlier incident)")], log_lines),
        (first + dt.timedelta(days=27), "s-0028-csv-tenant", "Make the CSV export tenant-aware.",
         [("memory_search", '{"query": "row-level security SET LOCAL"}', "MEMORY.md:24 Row-level security ... SET LOCAL"),
          ("edit_file", '{"path": "orchard/export.py"}', "edited 2 hunks"),
          ("run_tests", '{"args": "tests/test_export.py"}', "7 passed, 1 failed: test_tenant_isolation")], None),
    ]
    for day, sid, task, steps, big in sessions:
        messages = _session(day, sid, task, steps, big)
        if big:
            call_id = f"call_{sid}_log"
            evicted = paths.evicted_result(sid, call_id)
            put(evicted, big)
            for message in messages:
                if message.get("tool_call_id") == call_id:
                    rel = paths.relative(evicted)
                    message["content"] = (f"[tool result evicted: {len(big):,} chars saved to {rel}]\n"
                                          f"--- head ---\n{big[:400]}\n--- tail ---\n{big[-400:]}")
        put(paths.session_log(sid), "".join(jsonl_line(m) for m in messages))
    cache = [{"session_id": sid, "ended": f"{day.isoformat()}T12:00:00+00:00",
              "summary": f"{task} " + ("Finished; tests pass." if "tenant" not in sid else "One isolation test still fails.")}
             for day, sid, task, _steps, _big in sessions]
    put(paths.session_cache, "".join(jsonl_line(c) for c in cache))

    export_py = b"def export_csv(tenant, start, end):\n    ...\n"
    checkpoint = {
        "timestamp": f"{(first + dt.timedelta(days=27)).isoformat()}T10:40:00+00:00",
        "session_id": "s-0028-csv-tenant",
        "checkpoint_id": new_checkpoint_id(dt.datetime.combine(first + dt.timedelta(days=27), dt.time(10, 40))),
        "target": "Tenant-aware CSV export with isolation tests",
        "completed_steps": ["Read the RLS decision from memory", "Pass tenant id into export query"],
        "pending_steps": ["Fix test_tenant_isolation", "Update docs/runbook.md"],
        "artifacts": {"orchard/export.py": hashlib.sha256(export_py).hexdigest()},
        "context_summary": "Export streams rows with a server-side cursor; RLS needs SET LOCAL per transaction.",
        "last_action": "run_tests tests/test_export.py -> 1 failed",
        "error_state": "test_tenant_isolation: rows of tenant 2 visible to tenant 1",
        "tasks": [{"id": "t1", "title": "tenant id in export query", "status": "done", "depends_on": []},
                  {"id": "t2", "title": "SET LOCAL in export transaction", "status": "pending", "depends_on": ["t1"]},
                  {"id": "t3", "title": "update runbook", "status": "pending", "depends_on": ["t2"]}],
    }
    put(paths.checkpoint_dir("s-0028-csv-tenant") / f"{checkpoint['checkpoint_id']}.json",
                 json.dumps(checkpoint, ensure_ascii=False, indent=2) + "\n")
    handoff = {
        "id": "ho-orchard-oncall", "task_id": "orchard-oncall", "hop": 1,
        "created": f"{(first + dt.timedelta(days=24)).isoformat()}T15:00:00+00:00",
        "from_agent": "orchard-agent", "to_agent": "jonas-agent",
        "original_target": "Keep Orchard ingest and alerts healthy while Maya is on holiday",
        "why_this_agent": "Jonas is on call for the next two weeks",
        "completed_work": ["Ingest worker with backpressure", "Email alerts with daily digest", "Disk alert at 80%"],
        "known_constraints": ["No deploys on Fridays", "Never commit to main", "Dev DB on port 5433"],
        "failed_attempts": ["Websockets for live charts overloaded staging"],
        "current_state": "Staging healthy; pilot farm on 10-minute interval",
        "success_criteria": "Alert latency p95 under 2 minutes; no missed dry-soil alerts",
        "termination_condition": "Maya is back and has read the on-call notes",
    }
    put(paths.handoff(handoff["id"]), json.dumps(handoff, ensure_ascii=False, indent=2) + "\n")
    put(paths.progress_md, "# Progress\n\n## Goal\nTenant-aware CSV export with isolation tests.\n\n"
                 "## Progress\n- Tenant id passed into the export query.\n\n## Blockers\n"
                 "- test_tenant_isolation fails: RLS setting not applied inside the export transaction.\n\n"
                 "## Next step\nUse SET LOCAL app.tenant_id inside the export transaction.\n")
    put(paths.agents_md, "# AGENTS.md\n\nYou are Orchard's coding agent. Read MEMORY.md first, keep "
                 "progress.md current, save a checkpoint before side effects, never commit to main.\n")
    write_files(paths, files)
    return (f"{len(DAYS)} daily logs ({n_lines} lines), 1 archived log, {sum(len(b) for _, b in MEMORY_SECTIONS)} "
            f"memory bullets, {len(sessions)} sessions, 1 checkpoint, 1 hand-off")
