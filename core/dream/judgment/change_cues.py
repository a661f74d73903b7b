"""Change and sameness cues in the languages the corpus holds besides English (word_relations has the
English ones).

A change cue is closed-class grammar, not a topic word: the adverbs of "now / from now on / no
longer / instead" and the few verbs of changing, moving, replacing, raising and postponing. They were
written from each language's grammar, not from any labelled case. Alone a cue decides nothing (a
status line says "now" too); the dream uses it only as the word rules' half of an agreement: where
the learned head is also sure the fact is an update of a bullet (pools.HeadPolicy.cued_updates).
A sameness cue ("still", "as usual", "照常", "continua") is the other half: a line that says what did
not change, which the head may then call a duplicate (pools.HeadPolicy.same_duplicates).
"""
from __future__ import annotations

import re

# Chinese: change verbs (改/换/搬/调/推迟/提前/涨/降/升级/转/交给/接手/停用/取代) and the adverbs of "now",
# "from now on", "no longer".
_CHINESE = ("改成 改为 改到 改用 改在 改投 换成 换到 换用 换了 搬到 搬去 搬进 推迟 延期 提前到 调到 调成 调整为 "
            "不再 不用了 现在 以后 今后 从此 已经不 涨到 涨价 降到 降价 升级到 转到 转给 交给 接手 接替 停用 弃用 "
            "迁移到 取代 代替 变成 变为")
# Japanese and Korean: "changed to", "from now on", "no longer", "moved".
_JAPANESE_KOREAN = "に変更 に変わ 変えた 変わった 今後 これから もう 移った 移転 변경 바뀌 이제 더 이상 옮겼"
_CJK = re.compile("|".join(re.escape(w) for w in (_CHINESE + " " + _JAPANESE_KOREAN).split()))
# German, Spanish, French, Portuguese, Italian: "now", "from now on", "no longer", "instead", "changed",
# "moved", "switched".
_EUROPEAN = re.compile(
    r"\b(?:jetzt|ab sofort|nicht mehr|kein\w* mehr|stattdessen|umgezogen|gewechselt|geändert|verlegt|"
    r"ahora|ya no|en vez de|en lugar de|cambi[óé]|cambiamos|se mud[óa]|a partir de|"
    r"maintenant|désormais|dorénavant|au lieu de|a changé|changé|déménag\w*|à partir d[eu']|"
    r"agora|já não|em vez de|mudou|mudamos|passou a|passa a|a partir d[eo]|"
    r"adesso|ora in poi|d'ora in poi|non più|invece|cambiat[oa]|trasferit[oa]|spostat[oa])\b",
    re.IGNORECASE)


def foreign_change_cue(text: str) -> bool:
    """The text says, in one of these languages, that something changed or holds from now on."""
    return bool(_CJK.search(text) or _EUROPEAN.search(text))


# "still", "as before", "as usual", "unchanged" in the same languages. Not "continue (doing)" (继续,
# 引き続き): an agent's log says "继续执行" of a step, not of a fact that still holds.
_SAME_CJK = re.compile("|".join(re.escape(w) for w in (
    "照常 照旧 仍然 依然 依旧 还是 仍是 一直 不变 没变 同样 一如既往 相変わらず 変わらず 여전히 그대로".split())))
_SAME_EUROPEAN = re.compile(
    r"\b(?:immer noch|noch immer|weiterhin|nach wie vor|wie immer|wie gehabt|unverändert|"
    r"sigue|siguen|todavía|aún|como siempre|sin cambios|"
    r"toujours|comme d'habitude|comme avant|reste|restent|inchangé\w*|"
    r"continua|continuam|ainda|como sempre|segue|"
    r"ancora|come al solito|come sempre|resta|restano|invariat\w*)\b", re.IGNORECASE)


def foreign_sameness_cue(text: str) -> bool:
    """The text says, in one of these languages, that something is still as it was."""
    return bool(_SAME_CJK.search(text) or _SAME_EUROPEAN.search(text))
