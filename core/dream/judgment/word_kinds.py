"""The word rules for a fact's kind (dream.judgment = "rules", and the first say under the default
"both"; kinds.py). What kind of fact a log line is, before anything is proposed for MEMORY.md.

MEMORY.md holds what stays true: preferences, people, decisions, settings, lessons.
A daily log also holds what does not: to-dos and reminders, status and work in
progress, chatter about a bug that got fixed (transient), single dated events such as
a power cut this afternoon (one-off), and pasted passwords or keys (secret). Only
durable facts are promoted; the rest stay in the logs and in search, and the review
lists them with the reason.

The rules look at the shape of a sentence, never at its subject: task markers
("TODO:", "Waiting for"), progress words ("halfway", "40 of 120 done"), completion
of a task ("fixed", "ticked off", "merged"), time deixis that pins a line to one day
("today", "tonight", "this morning"), and signs that a line states a lasting rule
("from now on", "always", "never", "every"), which outweigh the rest. Each signal
has a weight; the kind with the highest total wins when it clears a threshold,
else the fact is durable (a fact kept by mistake costs a review click, a fact lost
costs the memory).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.secrets import holds_secret

DURABLE, TRANSIENT, ONE_OFF, SECRET = "durable", "transient", "one-off", "secret"
KINDS = (DURABLE, TRANSIENT, ONE_OFF, SECRET)
THRESHOLD = 2.0


@dataclass(frozen=True)
class FactKind:
    kind: str
    reason: str = ""
    score: float = 0.0          # the winning total (0 for a durable fact with no signal against it)

    @property
    def promoted(self) -> bool:
        return self.kind == DURABLE


def _rx(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.IGNORECASE | re.UNICODE)


# (pattern, weight, what it means) — weights add up within a kind.
_TRANSIENT = [
    (_rx(r"^(?:todo|to-do|to do|fixme|wip|next step|note to self|don'?t forget)\b\s*[:\-!]?"), 3.0, "a to-do"),
    (_rx(r"^(?:reminder|remember|done|answered|answer|question|q)\s*:"), 3.0, "a reminder, a finished task or a question"),
    (_rx(r"\?\s*$"), 3.0, "a question"),
    (_rx(r"^\S+(?:\s+\S+){0,3}\s+(?:answered|replied|confirmed|says so|got back)\s*:"), 2.5, "the answer to a question"),
    (_rx(r"^(?:remember to|need to|have to|must|should|remind \w+ to)\b"), 2.0, "a to-do"),
    (_rx(r"^(?:waiting|blocked|chasing|following up|follow up)\b"), 3.0, "waiting on something"),
    (_rx(r"\b(?:waiting for|blocked on|blocked by|no reply yet|still waiting|not yet|nothing conclusive)\b"),
     2.5, "work in progress"),
    (_rx(r"\b(?:about halfway|halfway through|halfway done|half written|a third done|still to go|in progress|work in progress|"
         r"still a mess|so far|aiming for|almost done|nearly done|not finished)\b"), 2.5, "work in progress"),
    (_rx(r"\b\d+\s+(?:of|out of|/)\s+\d+\s+(?:\w+\s+){0,2}(?:done|checked|finished|complete|left|to go)\b"),
     2.5, "progress on a task"),
    (_rx(r"^(?:working on|started|starting|spent|rerunning|re-running|retrying|trying|testing|debugging|"
         r"profiling|investigating|looking into|reviewed|reviewing|drafted|drafting|rewriting|writing up)\b"),
     2.5, "work in progress"),
    (_rx(r"\b(?:ticked off|crossed off|checked off|sorted now|all done|done now)\b"), 3.0, "a finished task"),
    (_rx(r"^(?:fixed|resolved|solved|merged|deployed|shipped|booked|ordered|sent|submitted|resubmitted|"
         r"cancelled|canceled|parked|closed|replied)\b"), 2.5, "a finished task"),
    (_rx(r"^\S+(?:\s+\S+){0,3}\s+(?:fixed|resolved|replied|arrived|merged|is in|are in)\s*[:;,]"), 2.5,
     "a finished task"),
    (_rx(r"\b(?:fixed it|fixed that|resubmitted|merged and|and applied|let it finish|passed on rerun|"
         r"passed on retry|is booked|are booked|got stuck|hung on|died with|timed out|hit a \w*\s*timeout|"
         r"flaked|is red|went red|is broken|broke again)\b"), 2.5, "chatter about a fixed problem"),
    (_rx(r"\b(?:MR|PR|merge request|pull request)\s*[!#]?\d+|(?<![\w/])[!#]\d{2,}\b|\bjob \d{3,}\b"), 1.5,
     "work-item chatter"),
    (_rx(r"\b(?:making a \w+ noise|not working|stopped working|is acting up|keeps crashing|is down|is stuck|"
         r"are stuck|got stuck|stuck in|hasn'?t moved|keeping an eye on|keep an eye on|monitoring it|"
         r"will look at it|look into it|check again|try again)\b"), 2.5, "a problem being handled"),
    (_rx(r"\b(?:the fix is (?:up|in)|fix landed|patch is up|results are back|is back from|are back from)\b"), 2.5,
     "a finished task"),
    (_rx(r"^\S+(?:\s+\S+){0,5}\s+(?:sorted|done|fixed|solved|resolved)\s*[:;]"), 2.5, "a finished task"),
    (_rx(r"\b(?:is|are) gone\b"), 1.0, "something removed"),
    (_rx(r"\b(?:collect|return|pay|send|finish|submit|book|order|renew|call|email)\b[^.;]*\bby "
         r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|the end of)\b"),
     2.5, "a to-do with a deadline"),
    (_rx(r"\b(?:go(?:es)? back|is due|are due|due back) by (?:monday|tuesday|wednesday|thursday|friday|"
         r"saturday|sunday|tomorrow)\b"), 2.5, "a to-do with a deadline"),
    (_rx(r"\b(?:before|by|until) (?:friday|monday|tuesday|wednesday|thursday|saturday|sunday)\b"), 1.0,
     "a near deadline"),
    (_rx(r"\b(?:this|next) week\b"), 1.0, "this week's work"),
    (_rx(r"\b(?:shopping|grocery|packing|to-do|todo) list\b"), 2.0, "a list for one errand"),
    (_rx(r"\b(?:arrive|arrives|arriving|be delivered|gets delivered)\s+(?:on\s+)?(?:monday|tuesday|wednesday|"
         r"thursday|friday|saturday|sunday|tomorrow|today|next week)\b"), 2.0, "an order on its way"),
    (_rx(r"\bgoing to\b[^.;]*\b(?:tonight|today|tomorrow|later|this)\b"), 2.0, "a plan for one day"),
    (_rx(r"\bdraft\b[^.;]*\bat [\d,.]+ (?:words|pages)\b"), 2.5, "progress on a draft"),
    # An instruction to oneself ("Find out why ...", "Make the export tenant-aware"); a rule said the
    # same way carries "always", "never" or "every", which outweigh it. "Update: ..." is a heading.
    (_rx(r"^(?:find out|figure out|look up|make sure|make|fix|add|check|ask|call|email|write|investigate|finish|"
         r"try|rename|set up|book|buy|schedule|send|clean up|remove|delete|refactor|implement|create|prepare)\b(?!\s*:)"),
     2.0, "a to-do"),
    (_rx(r"^(?:wrote|implemented|built|refactored|drafted|prototyped)\b"), 2.0, "work done"),
    (_rx(r"\bstill (?:fail|fails|failing|broken|open|red|flaky|pending|missing|to do)\b"), 2.5, "work in progress"),
    (_rx(r"\b(?:looks?|seems?|is looking|are looking) (?:healthy|fine|good|ok|okay|normal|stable|green|clean)\b"),
     2.5, "a status check"),
    (_rx(r"\bagain\b[^.;]*(?:;|$)"), 0.5, "a recurring nuisance"),
]

_ONE_OFF = [
    (_rx(r"\b(?:today|tonight|this morning|this afternoon|this evening|tomorrow|yesterday|last night|"
         r"right now|at the moment|this weekend|all week|that night|today's|tonight's|tomorrow's|"
         r"heute|morgen|gestern|aujourd'hui|demain|ce matin|ce soir|hoy|mañana|ayer|esta noche|"
         r"oggi|domani|ieri|stasera|stamattina|hoje|amanhã|ontem|vandaag|gisteren)\b|今天|明天|昨天|今晚|今日|明日|昨日"),
     3.0, "tied to one day"),
    (_rx(r"^(?:went to|attended|visited|met|saw|had a|got a|caught|lost|won)\b"), 2.0, "a single event"),
    (_rx(r"\b(?:had an?|got an?|lost an?|broke an?|caught an?|took the (?:afternoon|morning|day) off|"
         r"off sick|came within)\b"), 2.0, "a single event"),
    (_rx(r"\b(?:went through|went fine|went well|without impact|no impact|passed off)\b"), 1.5,
     "how one event went"),
    (_rx(r"\bon (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!s)"), 0.5, "one weekday"),
    (_rx(r"\b(?:outage|power cut|power flickered|fire drill|fire alarm|strike|roadworks|road works|"
         r"cancelled|canceled|dropped for|went down|was down|maintenance)\b"), 1.5, "a single incident"),
    (_rx(r"\b(?:party|do|drinks|wedding|funeral|dinner|lunch|concert|viewing|seminar|talk|appointment|"
         r"interview|match|show)\b[^.;]*\b(?:is|was) on (?:\w+ )?\d{1,2}(?:st|nd|rd|th)? "
         r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b"), 2.5, "an event on one date"),
    (_rx(r"\b(?:flies|flew|leaves|left|travels|is travelling|is traveling) (?:to|for)\b[^.;]*\b(?:back|"
         r"returns?) (?:on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|next week)\b"), 2.5,
     "a trip"),
    (_rx(r"\b(?:until|till) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow)\b"), 1.0,
     "for a few days"),
    (_rx(r"\bfor (?:about |around |nearly |almost )?(?:\d+|ten|twenty|thirty|forty|fifty|a few|an?) "
         r"(?:minutes|minute|hours|hour)\b"), 1.0, "how long one event lasted"),
    (_rx(r"\binstead of\b[^.;]*\b\d{1,2}:\d{2}\b"), 1.0, "a one-time deviation"),
    (_rx(r"\b(?:is|are|will be) (?:away|on holiday|on leave|on vacation)\b"), 2.0, "an absence"),
    (_rx(r"\bnext (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"), 1.5, "one day ahead"),
]

# A lasting rule outweighs the day it was written on ("after yesterday's check-up ... from now on").
_DURABLE = [
    (_rx(r"\b(?:from now on|going forward|from today on|for good|permanently|by default|as a rule|"
         r"for the record)\b"), 3.0),
    (_rx(r"\b(?:always|never|every|each|whenever|usually|prefers?|wants?|likes?|loves?|hates?|can'?t stand|"
         r"won'?t eat|is allergic|allergic to|is scared of|owns|lives in|lives on|works (?:from|at|as|on))\b"),
     1.0),
    (_rx(r"^(?:decision|decided|learned|learnt|lesson|rule|policy|convention|note)\b"), 2.0),
    (_rx(r"\b(?:now (?:\w+s|is|are|uses|lives|runs|goes|reads|does)|is now|are now|it'?s \w+(?: \w+)? now)\b"),
     1.5),
]

_WEEKDAY_EVERY = _rx(r"\b(?:on|every) (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)\b")


def _tally(text: str, rules) -> tuple[float, str]:
    total, best, reason = 0.0, 0.0, ""
    for pattern, weight, why in rules:
        if pattern.search(text):
            total += weight
            if weight > best:
                best, reason = weight, why
    return total, reason


def _durable_weight(text: str) -> float:
    total = sum(weight for pattern, weight in _DURABLE if pattern.search(text))
    if _WEEKDAY_EVERY.search(text):
        total += 1.0            # "on Thursdays" is a routine, not a date
    return total


def _tallies(body: str) -> tuple[float, str, float, str, float]:
    """The transient and one-off totals of a line with their reasons, and its signs of a lasting rule."""
    transient, t_reason = _tally(body, _TRANSIENT)
    one_off, o_reason = _tally(body, _ONE_OFF)
    return transient, t_reason, one_off, o_reason, _durable_weight(body)


def rule_signals(text: str) -> list[float]:
    """The rules' evidence as features for the learned kind head (features.line_features): the
    transient, one-off and lasting totals (in units of THRESHOLD) and whether the rules alone hold the
    line back. The head learns on the corpus how far to trust each, in every language."""
    transient, _t, one_off, _o, lasting = _tallies(text.strip())
    return [transient / THRESHOLD, one_off / THRESHOLD, lasting / THRESHOLD,
            float(max(transient, one_off) - lasting >= THRESHOLD)]


def classify_fact(text: str) -> FactKind:
    """The kind of one fact (its text without the bullet marker and time stamp)."""
    if holds_secret(text):
        return FactKind(SECRET, "holds a password, token or key", 10.0)
    transient, t_reason, one_off, o_reason, lasting = _tallies(text.strip())
    transient, one_off = transient - lasting, one_off - lasting
    if max(transient, one_off) < THRESHOLD:
        return FactKind(DURABLE)
    if transient >= one_off:
        return FactKind(TRANSIENT, t_reason, transient)
    return FactKind(ONE_OFF, o_reason, one_off)
