"""The English stopword list ships as data and equals scikit-learn's; reading it imports no numerical library."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evidencedesk.text.stopwords import language_stopwords, stopword_list


def test_english_list_is_scikit_learns() -> None:
    text = pytest.importorskip("sklearn.feature_extraction.text")
    assert stopword_list("english") == frozenset(text.ENGLISH_STOP_WORDS)
    assert len(stopword_list("english")) == 318
    assert language_stopwords("en") == stopword_list("english")


def test_reading_the_english_list_imports_no_scikit_learn() -> None:
    code = (
        "import sys; from evidencedesk.text.stopwords import stopword_list; "
        "words = stopword_list('english'); "
        "print(len(words), 'sklearn' in sys.modules, 'scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["318", "False", "False"]


def test_unknown_list_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="stopwords: must be one of english, auto"):
        stopword_list("klingon")
