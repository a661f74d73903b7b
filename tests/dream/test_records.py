"""Records: a line's form and key, and how two look-alike records differ (records.py)."""
import pytest

from core.dream.judgment.records import Record, pair_signals, record


@pytest.mark.parametrize("line, form, key", [
    ("- [09:12] ✅ Deployed blog v2.3 to Vercel", "✅", "Deployed blog v2.3"),
    ("- **Default model**: qwen3-8b", "label", "Default model"),
    ("- `scripts/backup.sh` — nightly restic backup to B2, 02:30", "code", "scripts/backup.sh"),
    ("- [10:00] `a41f9c2` feat(api): rate-limit /search", "commit", "a41f9c2"),
    ("- Redis | 7.2 | cache + queues | port 6379", "table4", "Redis"),
    ("| 服务 | 端口 | 负责人 |", "table3", "服务"),
    ("- 2026-10-02: switched the newsletter to Buttondown", "date", "2026-10-02"),
    ("- PR #212 merged: fix the login redirect", "ref", "PR 212"),
    ("- 状态: ✅ 正常", "label", "状态"),
    ("- ❌ Backup to B2 failed: quota", "❌ label", "Backup to B2 failed"),
    ("- Gateway port = 18789", "label", "Gateway port"),
])
def test_a_lines_form_and_key(line, form, key):
    found = record(line)
    assert (found.form, found.key) == (form, key)


def test_a_plain_sentence_has_no_form_and_its_first_words_for_key():
    assert record("- Priya wants incident summaries as five bullets max") == Record(
        "", "Priya wants incident", "summaries as five bullets max")
    assert record("- 每周五下午例会").form == ""


def test_a_url_is_not_a_label():
    assert record("- https://docs.example.org/setup is the install guide").form != "label"


def test_two_records_of_one_list_share_the_form_not_the_key():
    other = pair_signals("- `scripts/backup.sh` — nightly restic backup to B2",
                         "- [11:02] `scripts/rotate-logs.sh` — weekly log rotation")
    same = pair_signals("- **Default model**: qwen3-8b", "- [09:00] **Default model**: gemma-3-12b")
    assert other[0] == 1.0 and same[0] == 1.0
    assert same[1] == 1.0 and other[1] < 0.6
    assert same[2] < 0.5


def test_lines_of_different_forms_share_no_form():
    signals = pair_signals("- Redis | 7.2 | cache | 6379", "- **Redis**: 7.4")
    assert signals[0] == 0.0 and signals[1] == 1.0


def test_a_heading_before_a_labelled_line_is_its_subject_not_its_key():
    line = "- Dev server — 配置: 4核4G"
    assert record(line) == Record("label", "配置", "4核4G")
    signals = pair_signals("- Dev server — 配置: 4核4G", "- Dev server — 系统: Ubuntu 22.04")
    assert list(signals[3:]) == [1.0, 1.0] and signals[1] == 0.0
    assert record("- `scripts/backup.sh` — nightly backup").form == "code"      # a code span's dash is its own
