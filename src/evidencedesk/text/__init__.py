"""How evidencedesk reads text: one word pattern, one stemmer, the stopword lists, and overlap measures.

The index, retrieval, answering and evaluation stages all read words through this package, so a
word means the same thing when it is indexed, matched in an answer and scored in a diagnosis.
It imports nothing from the rest of evidencedesk.
"""

from evidencedesk.text.overlap import DUPLICATE_THRESHOLD, content_words, share_present, word_overlap
from evidencedesk.text.stems import stem, stem_words, stemmer
from evidencedesk.text.stopwords import STOPWORD_LISTS, STOPWORDS, stopword_list
from evidencedesk.text.tokenizer import DEFAULT_TOKENIZER, Tokenizer
from evidencedesk.text.words import normalise_space, normalize_text, numbers, token_pattern, word_set, words

__all__ = [
    "DEFAULT_TOKENIZER",
    "DUPLICATE_THRESHOLD",
    "STOPWORDS",
    "STOPWORD_LISTS",
    "Tokenizer",
    "content_words",
    "normalise_space",
    "normalize_text",
    "numbers",
    "share_present",
    "stem",
    "stem_words",
    "stemmer",
    "stopword_list",
    "token_pattern",
    "word_overlap",
    "word_set",
    "words",
]
