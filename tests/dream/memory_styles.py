"""MEMORY.md files written the ways people write them (synthetic; shaped after real agent workspaces)."""
from __future__ import annotations

TABLES = """# Memory

## Accounts

| service | account | note |
|---|---|---|
| mail | ops@example.org | shared inbox |
| git | deploy-bot | read only |

## Preferences

- Prefers short status updates in the morning
- Uses vim keybindings everywhere
"""

NUMBERED = """## Lessons

1. Always run the migration on a copy first
2. The staging gateway restarts at 04:00 UTC
3. Keep release notes under one page

## Rules

1) Never force-push to main
2) Review bot comments before merging
"""

NESTED = """## Projects

- **Orchard**: the irrigation planner
  - runs on the Hetzner box in Falkenstein
  - owner: Maya
- **Lumen**: the photo archive
  * stores originals on the NAS
    continuation line that belongs to the item above

## Notes
* Likes tea, not coffee
* Works from Porto on Fridays
"""

PROSE = """---
title: agent memory
updated: 2026-11-30
---

# Who I am

I am the assistant for the Orchard team. I keep this file short and I write in full
sentences when a list would lose the reason behind a decision.

**Owner:** Maya
**Timezone:** Europe/Lisbon

<!-- keep this section first -->

## Decisions

The team chose PostgreSQL over MySQL in October because the planner needs window
functions; nobody wants to revisit it.

```bash
./deploy.sh --env staging   # the only supported way to deploy
```

## Learnings
- The planner's cron runs at 02:30 UTC
"""

CHINESE = """# 记忆

## 用户偏好

- 馆长喜欢简短的早报
- 周五在家办公

## 项目

1. 果园项目：灌溉计划，部署在法尔肯施泰因
2. 相册项目：原图存放在 NAS 上

## 经验教训

- 升级前先备份数据库
- **关键洞察**：周报要附上数据来源
"""

NO_SECTIONS = """# Memory

I am the deploy assistant. Things to remember:

- The staging box is called kestrel
- Backups run nightly at 01:00
"""


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def no_final_newline(text: str) -> str:
    return text.rstrip("\n")


def big(lines: int = 1100) -> str:
    """A 1,000+ line MEMORY.md of tables, prose and lists, dated sections (the oldest is stale)."""
    out = ["# Memory", ""]
    section = 0
    while len(out) < lines:
        month = 1 + section % 12
        year = 2025 if section < 12 else 2026
        out += [f"## Log {year}-{month:02d} part {section}", "", f"Summary written on {year}-{month:02d}-15 about "
                f"workstream {section}.", "", "| item | value |", "|---|---|"]
        out += [f"| setting {section}-{n} | value {n * section} |" for n in range(8)]
        out += [""] + [f"- Workstream {section} fact {n}: the value of knob {n} is {n * 3 + section}"
                       for n in range(10)] + [""]
        section += 1
    return "\n".join(out) + "\n"


STYLES = {
    "tables": TABLES,
    "numbered": NUMBERED,
    "nested": NESTED,
    "prose-front-matter-code": PROSE,
    "chinese": CHINESE,
    "crlf": crlf(NESTED),
    "crlf-chinese-no-final-newline": no_final_newline(crlf(CHINESE)),
    "no-sections": NO_SECTIONS,
    "no-final-newline": no_final_newline(NUMBERED),
    "big": big(),
}
