"""The language the package speaks to a learner: English, or a translation from a catalog.

Messages are marked in the code with :func:`gettext` (``_``) and translated from gettext
catalogs shipped in the package (``lessons/locale/<lang>/LC_MESSAGES/<domain>.mo``, compiled
from the ``.po`` next to it by ``python -m lessons.i18n compile``). English is the source and
the fallback: a message with no translation is shown in English.

Which language, first match wins:

1. :func:`use_language` (a context manager) or :func:`set_language`, e.g. the grader for a
   Chinese submission, ``python -m lessons.l13 --lang zh``;
2. the environment variable ``LESSONS_LANG`` (``en``, ``zh``, ``zh_CN``);
3. a file ``.lessons-language`` in the current directory (the generated ``notebooks/zh`` and
   ``solutions/zh`` hold one: JupyterLab and nbval start a notebook's kernel in its folder);
4. English.
"""

from __future__ import annotations

import contextlib
import contextvars
import gettext as _gettext
import os
from functools import cache
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAINS = ("lessons", "claims")
SUPPORTED = ("en", "zh_CN")
MARKER = ".lessons-language"
_ALIASES = {"en": "en", "english": "en", "en_us": "en", "en_gb": "en",
            "zh": "zh_CN", "zh_cn": "zh_CN", "zh-cn": "zh_CN", "zh_hans": "zh_CN", "zh-hans": "zh_CN",
            "chinese": "zh_CN"}
_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("lessons_language", default=None)


def normalize(language: str) -> str:
    """``"zh"``, ``"zh-CN"``, ``"zh_CN"`` -> ``"zh_CN"``; ``"en"`` -> ``"en"``; else ValueError."""
    if not isinstance(language, str):
        raise TypeError(f"language must be a string such as 'en' or 'zh'; got {type(language).__name__}")
    key = language.strip().lower().replace(".utf-8", "").replace(".utf8", "")
    if key not in _ALIASES:
        raise ValueError(f"language must be one of {', '.join(SUPPORTED)} (or 'zh'); got {language!r}")
    return _ALIASES[key]


def _from_marker() -> str | None:
    try:
        text = (Path.cwd() / MARKER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    try:
        return normalize(text)
    except ValueError:
        return None


def language() -> str:
    """The current language: ``"en"`` or ``"zh_CN"``."""
    chosen = _chosen.get()
    if chosen:
        return chosen
    env = os.environ.get("LESSONS_LANG", "").strip()
    if env:
        try:
            return normalize(env)
        except ValueError:
            return "en"
    return _from_marker() or "en"


def set_language(lang: str | None) -> None:
    """Choose the language for the rest of this process (``None``: back to automatic)."""
    _chosen.set(None if lang is None else normalize(lang))


@contextlib.contextmanager
def use_language(lang: str | None):
    """``with use_language("zh"):`` messages in Chinese inside the block only."""
    token = _chosen.set(None if lang is None else normalize(lang))
    try:
        yield
    finally:
        _chosen.reset(token)


@cache
def translations(lang: str, domain: str = "lessons") -> _gettext.NullTranslations:
    if lang == "en":
        return _gettext.NullTranslations()
    return _gettext.translation(domain, localedir=str(LOCALE_DIR), languages=[lang], fallback=True)


def gettext(message: str, *, domain: str = "lessons") -> str:
    """``message`` in the current language (English when there is no translation)."""
    return translations(language(), domain).gettext(message)


def pgettext(context: str, message: str, *, domain: str = "lessons") -> str:
    """Like :func:`gettext`, for a message that needs a context (e.g. a claim's id)."""
    return translations(language(), domain).pgettext(context, message)


_ = gettext
