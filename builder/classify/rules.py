"""Cheap deterministic rules for messages whose label is clear from their form alone.

They run before the embedding model and only fire where the Appendix A definitions leave no doubt:
- no letters or digits at all (``---``, ``...``), a lone greeting or ping, an IDE/system artifact
  such as ``[Request interrupted by user]`` -> greeting ("a greeting, ping, or meaningless input");
- a bare acknowledgement, thanks, or go-on (``ok``, ``thanks!``, ``продолжай``, ``继续``, a lone option
  number, the IDE's ``@agent Try Again``) -> other ("residual non-programming content such as thanks or
  feedback"): it asks for no task of its own;
- the IDE's ``@agent Enable: ...`` model switch -> meta-question (about the assistant/IDE);
- an error log or stack trace with at most a short request around it and no question word -> bug-fix
  ("a bare stack trace defaults to a fix").
Everything else returns None and goes to the model.
"""

from __future__ import annotations

import re
import unicodedata

RULES_VERSION = "1"

_GREETINGS = {
    "hi", "hello", "hey", "hi there", "hello there", "hey there", "yo", "good morning", "good evening",
    "good afternoon", "ping", "test", "testing", "hallo", "hola", "ciao", "salve", "olá", "ola", "oi",
    "bonjour", "salut", "привет", "здравствуй", "здравствуйте", "добрый день", "你好", "您好", "嗨", "哈喽",
    "こんにちは", "xin chào", "xin chao", "ahoj", "hej", "merhaba", "안녕하세요",
    "[request interrupted by user]", "[request interrupted by user for tool use]",
}

_ACKS = {
    # thanks / feedback
    "thanks", "thank you", "thx", "ty", "thanks a lot", "thank you so much", "great thanks", "perfect thanks",
    "ok thanks", "great", "perfect", "awesome", "nice", "cool", "excellent", "good", "good job", "nice work",
    "well done", "looks good", "lgtm", "sounds good", "correct", "exactly", "right", "fine", "no worries",
    "спасибо", "спс", "отлично", "супер", "класс", "хорошо", "понял", "谢谢", "谢谢你", "多谢", "好的", "很好",
    "不错", "可以", "完美", "grazie", "perfetto", "ottimo", "va bene", "obrigado", "obrigada", "valeu",
    "perfeito", "gracias", "perfecto", "merci", "parfait", "cảm ơn", "děkuji", "danke",
    # acknowledgements / go-on
    "ok", "okay", "k", "kk", "yes", "yep", "yeah", "y", "no", "nope", "n", "sure", "do it", "go", "go ahead",
    "go on", "continue", "proceed", "next", "keep going", "carry on", "resume", "yes please", "ok continue",
    "ok go ahead", "please continue", "continue please", "yes go ahead", "yes proceed", "ok proceed",
    "ок", "окей", "да", "нет", "давай", "продолжай", "продолжи", "продолжить", "дальше", "вперед", "вперёд",
    "继续", "好", "是", "是的", "对", "行", "开始吧", "继续吧", "sì", "si", "continua", "vai", "procedi",
    "sim", "pode continuar", "continue por favor", "pode seguir", "sigue", "seguir", "dale", "oui", "non",
    "vas-y", "continue stp", "tiếp tục", "pokračuj", "ano", "weiter", "ja",
}

_AGENT_BUTTON = re.compile(r"^@agent\s+(try again|continue\b.*)$", re.I | re.S)
_AGENT_SETTING = re.compile(r"^@agent\s+enable\b", re.I)
_OPTION = re.compile(r"^(option\s*)?[0-9a-d]{1,2}[.)]?(\s*[,/]?\s*[0-9][a-d]?)*$", re.I)

# Lines that look like machine output: a stack frame, a log record, a compiler/linter diagnostic, JSON.
_TRACE_LINE = re.compile(
    r"""(^\s*at\s+\S+.*[:(]\d+)                              # JS/Java frame
      |(^\s*File\s+"[^"]+",\s+line\s+\d+)                      # Python frame
      |(^\s*\(\S+\s+[\d.]+\)\s+\S+:\d+)                        # Elixir frame
      |(Traceback\s+\(most\s+recent\s+call\s+last\))
      |(^\s*[\w.$]*(Error|Exception|Warning|Panic|panic)\b[:\s])  # "TypeError: ..."
      |(^\s*(npm\s+ERR!|ERROR|FATAL|error\[E\d+\]|error:|Error:|E\s+\w+Error|FAILED|\*\*\s*\()) 
      |(^\s*\d{4}-\d\d-\d\dT?\s?\d\d:\d\d)                     # timestamped log line
      |(^\s*[\[{]?\s*"(resource|owner|severity|message|code)"\s*:)  # IDE "Problems" JSON
      |(\.\w{1,5}:\d+:\d+)                                      # file.ts:12:5
      |(^\s*>?\s*\d+\s*\|)                                      # code frame gutter
    """, re.X | re.M)
_QUESTION_WORDS = re.compile(r"\b(why|explain|how come|what does|what is|understand|investigate)\b|почему|为什么|perch[eé]|por ?qu[eé]", re.I)
_FIX_WORDS = re.compile(r"\b(fix|solve|resolve|repair)|исправ|почини|修复|修一下|sistema|corrig|arregl", re.I)


def _norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).strip().lower()
    t = re.sub(r"[\s]+", " ", t)
    return t.strip(" \t\n.!?,;:~…。！？，、-*_`'\"()")


def prose_and_log(text: str) -> tuple[str, int]:
    """Split a message into its natural-language lines and the count of machine-output lines."""
    prose, n_log = [], 0
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if _TRACE_LINE.search(line) or (len(s) > 3 and sum(c.isalpha() for c in s) < 0.4 * len(s)):
            n_log += 1
        else:
            prose.append(s)
    return "\n".join(prose), n_log


def rule_label(text: str) -> str | None:
    """The label a rule gives ``text``, or None when no rule is sure."""
    if not any(c.isalnum() for c in text):
        return "greeting"
    raw = text.strip()
    if _AGENT_BUTTON.match(raw):
        return "other"
    if _AGENT_SETTING.match(raw):  # the IDE's "enable model X" button: about the assistant itself
        return "meta-question"
    norm = _norm(raw)
    if norm in _GREETINGS or raw.lower() in _GREETINGS:
        return "greeting"
    if norm in _ACKS or _OPTION.match(norm):
        return "other"
    prose, n_log = prose_and_log(raw)
    if n_log >= 1 and len(prose.split()) <= 40 and (n_log >= 2 or len(prose.split()) <= 3):
        # "why does this fail? <trace>" asks for an investigation (debug): leave it to the model,
        # unless the same prose also asks for a fix.
        if not _QUESTION_WORDS.search(prose) or _FIX_WORDS.search(prose):
            return "bug-fix"
    return None
