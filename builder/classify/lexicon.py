"""Multilingual cue words per intent: a soft, additive feature of the embedded classifier.

MiniLM is trained on English; a terse Russian, Chinese, Italian or Portuguese request ("исправь",
"修复", "aggiungi", "corrige") carries its intent in one verb that a lexicon catches reliably. A cue only
adds to an intent's score; it never decides alone. Patterns are matched case-insensitively on the
message's prose (machine-output lines dropped).
"""

from __future__ import annotations

import re

import numpy as np

from swe_taskflow.taxonomy import INTENT_INDEX, INTENTS

LEXICON_VERSION = "2"

_CUES: dict[str, str] = {
    "bug-fix": r"\bfix|\bbugs?\b|\berrors?\b|\bissues?\b|not working|doesn'?t work|isn'?t working|does not work|"
               r"\bbroken|still (not|an issue|the same|getting|seeing|failing|broken)|same (error|issue|problem)|"
               r"\bcrash|\bfails?\b|failing|\bwrong\b|\bhangs?\b|stuck|exception|исправ|ошибк|не работает|почини|"
               r"баг|修复|报错|错误|不行|没反应|errore|non funziona|sistema|\berro\b|não funciona|corrig|arregl|"
               r"no funciona|marche pas|pourri|cassé|lỗi|chyba|nefunguje",
    "new-feature": r"\badd\b|implement|\bcreate\b|\bbuild (a|an|the)\b|make (it|the|a|sure|this)\b|set (it )?up|"
                   r"\bnew\b|feature|support for|\ballow\b|\bi (want|need|would like)|let'?s (add|create|build|make|implement)|"
                   r"добав|сдела|хотел бы|创建|新增|添加|实现|增加|改成|aggiung|\bcrea\b|implementa|adicion|\bcrie\b|quero|"
                   r"agrega|ajoute|créer|je (veux|souhaite)|thêm|vytvoř|přidej",
    "execute": r"\brun\b|\bcommit|\bpush\b|deploy|\bpr\b|pull request|\bmerge\b|\binstall\b|\brestart\b|"
               r"\btry again\b|запуст|закоммит|задеплой|运行|提交|部署|esegui|\broda\b|ejecuta|\bcorre\b|\blance\b",
    "debug": r"\bwhy\b|investigat|root cause|figure out|find out|look into|check (the )?logs|почему|为什么|perch[eé]|"
             r"por qu[eé]|pourquoi",
    "explain": r"what does|how does|\bexplain|walk me through|what is this|where (is|do we)|объясни|что делает|解释|"
               r"干什么|cosa fa|o que (esse|este|isso)|qué hace|tác dụng",
    "question": r"how (do|can|to) (i|you|we)\b|what is the (difference|best)|difference between|is it possible|"
                r"как (настроить|сделать)|怎么|如何|区别|come si|como (se|faço)|cómo",
    "planning": r"\bplan\b|\bdesign\b|approach|architecture|next steps?|what'?s next|propose|thoughts|"
                r"what do you think|should we|pros and cons|\bspec\b|план|方案|设计|下一步|piano|planej",
    "refactor": r"refactor|clean ?up|simplif|extract|\brename|reorganiz|restructur|consolidat|duplicat|readab|"
                r"рефактор|重构|优化|refator",
    "transformation": r"\bconvert|migrat|\bport (to|this)|rewrite (it )?(in|to)|upgrade|переведи|перепиши|转成|改写|"
                      r"converti|\bmigra",
    "tests": r"\btests? (for|coverage|cases?)|write tests|add tests|unit tests?|test coverage|\be2e\b|тест|测试用例|"
             r"单元测试|testes|pruebas",
    "generate-docs": r"readme|\bdocument|\bdocs?\b|docstring|\bcomments?\b|changelog|\.md\b|документ|文档|注释|documenta",
    "code-review": r"\breview|look over|any (issues|flaws)|does (this|it) look|best practice|проверь|review一下",
    "data-analysis": r"analy[sz]e (the |this |these )?data|\bcharts?\b|\bplot\b|metrics|statistic|dashboard|\bcsv\b|"
                     r"анализ|分析|统计|analizza|analise",
    "meta-question": r"\b(your|you were given) (rules|instructions)|which model|copilot-instructions|cursor rules|"
                     r"\.mdc\b|quota|billing|context window|mcp server",
}
_COMPILED = {k: re.compile(v, re.I) for k, v in _CUES.items()}

# A message that asks rather than orders: a wh-word opening, a question mark, or a CJK question particle.
_INTERROGATIVE = re.compile(r"^\s*(what|which|how|why|where|when|who|is|are|do|does|did|should|would|could)\b|[?？]\s*$|"
                            r"[吗呢]\s*[?？]?\s*$|什么|怎么|为什么|是不是|有没有|对吗|对吧|^\s*(что|как|почему|зачем|где|"
                            r"какой|для чего)\b|^\s*(para que|por qu[eé]|qu[eé]|c[oó]mo|perch[eé]|come|cosa|o que|"
                            r"pourquoi|comment|quel)\b", re.I)
_ASKING = ("question", "explain", "debug", "planning", "meta-question")
# Numbered answers to the assistant's clarifying questions ("1. yes 2. keep them separate ...").
_NUMBERED = re.compile(r"^\s*(\d+[.)]|[a-d][.)])\s+\S", re.M)


def cue_matrix(texts: list[str]) -> np.ndarray:
    """(n, 16) of 0/1: whether each intent's cue words occur in each text."""
    out = np.zeros((len(texts), len(INTENTS)), dtype=np.float64)
    for i, t in enumerate(texts):
        for name, rx in _COMPILED.items():
            if rx.search(t):
                out[i, INTENT_INDEX[name]] = 1.0
    return out


def form_matrix(texts: list[str]) -> np.ndarray:
    """(n, 16): +1 on the asking intents for an interrogative message (else -1 on question), +2 on planning for a list of
    three or more numbered items (answers to the assistant's clarifying questions)."""
    out = np.zeros((len(texts), len(INTENTS)), dtype=np.float64)
    asking = [INTENT_INDEX[x] for x in _ASKING]
    for i, t in enumerate(texts):
        first = t.strip().splitlines()[0] if t.strip() else ""
        last = t.strip().splitlines()[-1] if t.strip() else ""
        if _INTERROGATIVE.search(first) or _INTERROGATIVE.search(last):
            out[i, asking] += 1.0
        else:  # a general question is asked as one; an order ("修复这个报错") is not
            out[i, INTENT_INDEX["question"]] -= 1.0
        if len(_NUMBERED.findall(t)) >= 3:
            out[i, INTENT_INDEX["planning"]] += 2.0
    return out
