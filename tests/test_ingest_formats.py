"""Reading transcripts: every format, the real-world mess each one tolerates,
and the refusals that name the file and line. No database needed."""

from __future__ import annotations

import codecs
import datetime
import json
import tempfile
from pathlib import Path

import pytest
import srt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from annotation.ingest.errors import IngestError
from annotation.ingest.formats import read_transcript

CORPUS = Path(__file__).resolve().parent / "ingest_corpus"
# Hypothesis keeps caches under .hypothesis/ in the working directory; keep them out of the repository.
set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "rescue-annot-hypothesis"))
# Fixed seeds: CI runs the same 100 examples each time, so a failure always reproduces.
PROPERTY = dict(
    max_examples=100, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def read(relative: str):
    return read_transcript(relative, (CORPUS / relative).read_bytes())


def codes(notes_list) -> set[str]:
    return {n["code"] for n in notes_list}


def cue_tuples(transcript):
    return [(c.start, c.end, c.speaker, c.text) for c in transcript.cues]


# --- each format ------------------------------------------------------------


def test_subrip_takes_the_speaker_from_a_name_prefix():
    t = read("maya_and_tobias/001_clean.srt")
    assert t.format == "srt"
    assert cue_tuples(t) == [
        (0.0, 3.2, "Dr. Weiss", "What brings you both in today?"),
        (3.5, 7.9, "Maya", "He works every evening. I wait, and he doesn't notice."),
        (8.1, 10.0, "Tobias", "That's not fair."),
        (10.4, 14.25, "Dr. Weiss", "Tobias, what happens for you when Maya says that?"),
    ]
    assert [c.line for c in t.cues] == [2, 6, 10, 14]  # the timing line of each cue
    assert t.speaker_tags == ["Dr. Weiss", "Maya", "Tobias"]


def test_subrip_without_speaker_labels_gives_cues_without_speaker():
    t = read("maya_and_tobias/006_no_speakers.srt")
    assert [c.speaker for c in t.cues] == ["", ""]
    assert [c.text for c in t.cues] == ["Where would you like to begin?", "Probably with last Sunday."]
    assert "no_speakers" in codes(t.notes.normalisations)


def test_webvtt_voice_tags_give_speakers_and_styling_becomes_plain_text():
    t = read("maya_and_tobias/008_voices.vtt")
    assert t.format == "vtt"
    assert cue_tuples(t) == [
        (0.0, 3.0, "Maya", "I really need you & me to be on the same side."),
        (3.5, 6.0, "Tobias", "I am on your side."),
        (6.2, 9.0, "Dr. Weiss", "Tell her that, then."),
        (9.1, 10.0, "Tobias", "Maya: I'm on your side."),  # a label that differs from the voice stays text
    ]
    assert [c.line for c in t.cues] == [11, 15, 19, 22]
    assert "styling_removed" in codes(t.notes.normalisations)


def test_webvtt_without_voices_reads_name_labels_and_keeps_text_after_a_blank_line():
    t = read("maya_and_tobias/009_labels.vtt")
    assert cue_tuples(t) == [
        (0.0, 2.5, "Counselor", "How was the week?"),
        (2.8, 5.0, "Maya", "Quieter. Better, actually."),
        (5.2, 7.0, "Tobias", "Yeah. Better."),
    ]
    assert {
        "line": 9,
        "code": "blank_line_in_cue",
        "message": "blank line inside a cue; the text after it kept with the cue",
    } in t.notes.oddities


def test_webvtt_without_any_speaker_information():
    text = "WEBVTT\n\n00:01.000 --> 00:02.500\nJust words.\n\n00:03.000 --> 00:04.000\n<i>More</i> words.\n"
    t = read_transcript("g/plain.vtt", text.encode())
    assert cue_tuples(t) == [(1.0, 2.5, "", "Just words."), (3.0, 4.0, "", "More words.")]


def test_csv_with_a_header_in_any_order_clock_times_and_a_quoted_multi_line_text():
    t = read("maya_and_tobias/010_table.csv")
    assert t.format == "csv"
    assert cue_tuples(t) == [
        (0.0, 2.5, "Maya", "I keep score, I know."),
        (2.8, 5.1, "Tobias", "You do. A lot."),
        (5.3, 8.0, "Therapist", "What would it mean to stop counting?"),
    ]
    assert [c.line for c in t.cues] == [2, 3, 5]


def test_tsv_without_a_header_reads_positional_columns_in_seconds():
    t = read("maya_and_tobias/011_seconds.tsv")
    assert t.format == "tsv"
    assert cue_tuples(t)[1] == (2.75, 4.0, "Therapist", "Please.")
    assert "no_header" in codes(t.notes.normalisations)


def test_csv_with_three_columns_finds_speakers_in_the_text():
    t = read_transcript("g/x.csv", b"start,end,text\n0,1.5,Maya: Hello.\n1.5,3,Just words.\n")
    assert cue_tuples(t) == [(0.0, 1.5, "Maya", "Hello."), (1.5, 3.0, "", "Just words.")]


def test_semicolon_csv_with_decimal_commas_is_sniffed():
    t = read_transcript("g/x.csv", b"Start;End;Speaker;Text\n0,5;2,25;Maya;Hi there.\n2,5;4;Tobias;Hello.\n")
    assert cue_tuples(t) == [(0.5, 2.25, "Maya", "Hi there."), (2.5, 4.0, "Tobias", "Hello.")]


def test_diarisation_json_segments_keep_anonymous_tags_and_unlabelled_segments():
    t = read("maya_and_tobias/012_diarised.json")
    assert t.format == "diarisation_json"
    assert [c.speaker for c in t.cues] == ["SPEAKER_00", "SPEAKER_01", "", "SPEAKER_02"]
    assert t.cues[0].text == "How are the two of you today?"  # leading space of the tool's text trimmed
    assert t.cues[0].start == 0.031
    assert [c.line for c in t.cues] == [3, 17, 23, 28]
    assert {"line": 23, "code": "no_speaker", "message": "cue has no speaker label"} in t.notes.oddities


def test_rescue_clip_json_uses_rows_skeleton_and_ignores_annotations():
    t = read("maya_and_tobias/013_rescue_clip.json")
    assert t.format == "rescue_json"
    assert cue_tuples(t) == [
        (0.0, 3.0, "Maya", "I don't want to fight tonight."),
        (3.2, 6.0, "Therapist", "What would you want instead?"),
        (6.1, 9.0, "Tobias", "Just dinner. Just us."),
    ]
    assert t.metadata == {
        "sample_id": "maya_and_tobias/013_rescue_clip",
        "scenario": "couple",
        "source_file": "fictional/maya_and_tobias/013.json",
        "participants": ["Tobias", "Maya"],
    }
    assert "annotations_ignored" in codes(t.notes.normalisations)


def test_the_content_decides_the_format_when_the_extension_disagrees():
    vtt_text = (CORPUS / "maya_and_tobias/008_voices.vtt").read_bytes()
    t = read_transcript("g/misnamed.srt", vtt_text)
    assert t.format == "vtt" and len(t.cues) == 4
    assert "format_mismatch" in codes(t.notes.oddities)


# --- rolling auto-captions ---------------------------------------------------

# The three lines spoken in rolling/001_auto_captions.vtt, each word with the time its timestamp tag gives
# (the first word of a line starts with its cue), typed here from the file by hand.
SPOKEN = [
    (0.16, 2.879, "so what would you like to start with today", [0.16, 0.4, 0.56, 0.72, 0.88, 1.04, 1.2, 1.52, 1.76]),
    (
        2.879,
        5.519,
        "the money thing I guess it keeps coming back",
        [2.879, 3.04, 3.36, 3.68, 3.84, 4.16, 4.32, 4.64, 4.96],
    ),
    (
        5.519,
        8.43,
        "every time one of us ends up leaving the room",
        [5.519, 5.76, 6.0, 6.16, 6.24, 6.48, 6.72, 6.88, 7.2, 7.36],
    ),
]


def test_rolling_auto_captions_collapse_into_their_distinct_lines():
    raw = (CORPUS / "rolling" / "001_auto_captions.vtt").read_bytes()
    assert raw.count(b" --> ") == 5  # five cues in the file, the ones webvtt-py reads one by one
    t = read("rolling/001_auto_captions.vtt")
    # Each line once, from the cue that shows it first to where the next line starts (through its hold cue).
    assert cue_tuples(t) == [(start, end, "", text) for start, end, text, _ in SPOKEN]
    assert [c.line for c in t.cues] == [5, 13, 21]  # the timing line of the cue that brought each line
    rolled = t.notes.as_dict()["rolling_captions"]
    assert (rolled["cues_read"], rolled["lines"], rolled["words_timed"]) == (5, 3, 28)
    assert [(w["start"], w["end"], w["text"]) for w in rolled["word_timings"]] == [s[:3] for s in SPOKEN]
    for entry, (_, _, text, times) in zip(rolled["word_timings"], SPOKEN):
        assert entry["words"] == [[at, word] for at, word in zip(times, text.split())]
    assert t.notes.headlines == [
        "rolling auto-captions: 5 cues, each repeating the line before it, collapsed into 3 lines (word timings kept "
        "in this report)"
    ]
    assert "rolling_captions" in codes(t.notes.normalisations)


def test_rolling_captions_without_word_timings_still_collapse_in_webvtt_and_subrip():
    # The same rolling shape after a converter dropped the timestamp tags (and the hold cues).
    text = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nwhere do we start\n\n"
        "00:00:03.000 --> 00:00:05.000\nwhere do we start\nwith the kids I think\n\n"
        "00:00:05.000 --> 00:00:07.500\nwith the kids I think\nthey hear everything\n"
    )
    t = read_transcript("g/converted.vtt", text.encode())
    assert cue_tuples(t) == [
        (1.0, 3.0, "", "where do we start"),
        (3.0, 5.0, "", "with the kids I think"),
        (5.0, 7.5, "", "they hear everything"),
    ]
    rolled = t.notes.as_dict()["rolling_captions"]
    assert rolled["words_timed"] == 0 and all(w["words"] == [] for w in rolled["word_timings"])
    assert t.notes.headlines == [
        "rolling auto-captions: 3 cues, each repeating the line before it, collapsed into 3 lines (the file has no "
        "word timings)"
    ]
    # The same captions converted to SubRip.
    subrip = "".join(
        f"{n}\n00:00:0{c.start:.3f} --> 00:00:0{c.end:.3f}\n".replace(".", ",") + "\n".join(lines) + "\n\n"
        for n, (c, lines) in enumerate(
            zip(
                t.cues,
                [
                    ["where do we start"],
                    ["where do we start", "with the kids I think"],
                    ["with the kids I think", "they hear everything"],
                ],
            ),
            start=1,
        )
    )
    assert cue_tuples(read_transcript("g/converted.srt", subrip.encode())) == cue_tuples(t)


@pytest.mark.parametrize(
    "text",
    [
        # Two people saying the same word in turn is speech, not a rolling display ...
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Maya>Yes.\n\n00:00:02.000 --> 00:00:03.000\n<v Maya>Yes.\n\n"
        "00:00:03.000 --> 00:00:04.000\n<v Tobias>Fine then.\n\n00:00:04.000 --> 00:00:05.000\n<v Maya>Really?\n\n"
        "00:00:05.000 --> 00:00:06.000\n<v Tobias>Really.\n",
        # ... and so is one repetition in a short file ...
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nYes.\n\n00:00:02.000 --> 00:00:03.000\nYes.\n\n00:00:03.000 --> "
        "00:00:04.000\nFine.\n",
        # ... or the same word again and again: no cue carries a line on and adds one.
        "WEBVTT\n\n" + "".join(f"00:00:0{n}.000 --> 00:00:0{n}.500\nNo.\n\n" for n in range(1, 6)),
    ],
)
def test_a_transcript_that_only_sometimes_repeats_a_line_is_not_rolling(text):
    t = read_transcript("g/repeats.vtt", text.encode())
    assert (
        len(t.cues) == text.count(" --> ") and "rolling_captions" not in t.notes.as_dict() and t.notes.headlines == []
    )


# --- encodings --------------------------------------------------------------


def test_utf8_with_bom_and_crlf_line_ends():
    t = read("maya_and_tobias/002_messy.srt")
    assert t.encoding["encoding"] == "UTF-8" and t.encoding["bom"] is True
    assert {"bom_removed", "line_ends"} <= codes(t.notes.normalisations)
    assert t.cues[0].speaker == "MAYA"  # no BOM glued to the first label


def test_windows_1252_is_detected_recorded_and_converted():
    t = read("maya_and_tobias/003_cp1252.srt")
    assert t.encoding["method"] == "charset-normalizer" and t.encoding["encoding"] == "Windows-1252"
    assert "detected" in t.encoding and "equally_likely" in t.encoding
    assert t.cues[0].text == "It\u2019s not \u201cfine\u201d \u2013 you always say that."
    assert t.cues[1].text == "I was na\u00efve, I know. We went to the caf\u00e9 anyway."
    assert "encoding_converted" in codes(t.notes.normalisations)


def test_utf16_with_bom():
    t = read("maya_and_tobias/004_utf16.srt")
    assert t.encoding["encoding"] == "UTF-16"
    assert t.cues[1].text == "I\u2019m looking. I\u2019m right here."


def test_utf16_without_bom_is_detected():
    t = read("maya_and_tobias/005_utf16le_nobom.vtt")
    assert t.encoding["codec"] == "utf_16_le"
    assert [c.speaker for c in t.cues] == ["Maya", "Tobias"]


def test_a_stray_control_character_is_dropped_and_recorded():
    raw = b"1\n00:00:00,000 --> 00:00:01,000\nMaya: Hi.\x1a\n"
    t = read_transcript("g/x.srt", raw)
    assert t.cues[0].text == "Hi."
    assert t.notes.oddities == [{"line": 3, "code": "control_character", "message": "control character U+001A removed"}]


# --- mess that is tolerated --------------------------------------------------


def test_numbering_gaps_trailing_whitespace_styling_multi_line_and_an_empty_final_cue():
    t = read("maya_and_tobias/002_messy.srt")
    assert cue_tuples(t) == [
        (1.0, 4.0, "MAYA", 'I asked you twice. It\'s always "later".'),
        (4.5, 6.0, "TOBIAS", "I heard you."),
        (6.2, 9.0, "THERAPIST", "Let's slow down here. And breathe for a moment."),
        (9.5, 11.0, "MAYA", "Fine."),
    ]
    normalised = codes(t.notes.normalisations)
    assert {"trailing_whitespace", "styling_removed", "multi_line_joined"} <= normalised
    oddities = {(o["code"], o["line"]) for o in t.notes.oddities}
    assert ("numbering_gap", 11) in oddities
    assert ("blank_line_in_cue", 11) in oddities
    assert ("empty_cue", 21) in oddities


def test_overlapping_and_out_of_order_cues_are_kept_in_time_order_and_recorded():
    t = read("maya_and_tobias/007_overlap.srt")
    assert [c.start for c in t.cues] == [0.0, 4.0, 6.5, 6.5, 9.0]
    oddities = {(o["code"], o["line"]) for o in t.notes.oddities}
    assert ("overlap", 6) in oddities and ("out_of_order", 14) in oddities
    assert "reordered" in codes(t.notes.normalisations)


def test_a_cue_with_two_speakers_is_split_into_two_cues_with_its_times():
    t = read("maya_and_tobias/007_overlap.srt")
    split = [(c.speaker, c.text) for c in t.cues if c.line == 14]
    assert split == [("Maya", "A text is not the same."), ("Tobias", "It's something.")]
    assert ("several_speakers_in_cue", 14) in {(o["code"], o["line"]) for o in t.notes.oddities}


def test_group_answers_and_role_names_stay_raw_tags():
    t = read("okafor_family/001_dinner.srt")
    assert t.speaker_tags == ["Counsellor", "Ada", "Ben", "Chidi", "Dora", "ALL"]


def test_ordinary_sentences_with_a_colon_are_not_taken_for_speakers():
    raw = b"1\n00:00:00,000 --> 00:00:02,000\nLook: I tried.\n\n2\n00:00:02,000 --> 00:00:04,000\nI said: no.\n"
    assert [c.speaker for c in read_transcript("g/x.srt", raw).cues] == ["", ""]


# --- refusals name the file and the line ----------------------------------------


@pytest.mark.parametrize(
    "relative, line, words",
    [
        ("refused/binary.srt", None, "binary data"),
        ("refused/no_cues.srt", 1, "no timed cues"),
        ("refused/backwards.srt", 10, "time goes backwards from 600.0 s to 4.0 s, by more than the clip's length"),
        ("refused/end_before_start.vtt", 6, "ends (3.0 s) before it starts (5.0 s)"),
        ("refused/bad_timing.srt", 6, "timing line not understood: '00:00:03,000 -> 00:00:04,000'"),
        ("refused/bad_time.csv", 3, "end time 'soon' is not a time"),
        ("refused/invalid.json", 4, "invalid JSON"),
    ],
)
def test_unreadable_files_are_refused_naming_file_and_line(relative, line, words):
    with pytest.raises(IngestError) as caught:
        read(relative)
    error = caught.value
    assert error.file == relative and words in error.message
    if line is not None:
        assert error.line == line and str(error).startswith(f"{relative}, line {line}: ")
    else:
        assert error.line is not None and str(error).startswith(f"{relative}, line ")


@pytest.mark.parametrize(
    "name, raw, words",
    [
        ("g/empty.srt", b"", "empty"),
        ("g/blank.vtt", b"  \n\n", "empty"),
        ("g/header_only.vtt", b"WEBVTT\n\n", "no cues with words"),
        ("g/only_empty_cues.srt", b"1\n00:00:00,000 --> 00:00:01,000\n\n", "no cues with words"),
        ("g/not_vtt.vtt", b"hello\n00:00:01.000 --> 00:00:02.000\nx\n", "first line must start with WEBVTT"),
        ("g/no_columns.csv", b"when,who,what\n1,2,3\n", "names no start, end, text column"),
        ("g/negative.json", b'{"segments": [{"start": -1, "end": 2, "text": "x"}]}', "not a time"),
        ("g/nan.json", b'{"segments": [{"start": NaN, "end": 2, "text": "x"}]}', "not a time"),
        ("g/other.json", b'{"hello": 1}', "neither a 'segments' list"),
        ("g/nul.srt", b"1\n00:00:00,000 --> 00:00:01,000\nhi\x00there\n", "binary data"),
        ("g/doc.pdf", b"%PDF-1.4 something", "unsupported file type"),
    ],
)
def test_more_refusals(name, raw, words):
    with pytest.raises(IngestError, match=words.replace("(", r"\(").replace(")", r"\)")) as caught:
        read_transcript(name, raw)
    assert str(caught.value).startswith(name)


# --- properties -------------------------------------------------------------

_names = st.sampled_from(["Maya", "Tobias", "Therapist", "Dr. Weiss", "SPEAKER_01", None])
_words = st.lists(
    st.sampled_from(["I", "you", "never", "listen", "okay", "fine,", "café", "“really”", "—", "so", "what?", "it's"]),
    min_size=1,
    max_size=12,
)


@st.composite
def _cue_lists(draw):
    count = draw(st.integers(min_value=1, max_value=15))
    start, cues = 0, []
    for _ in range(count):
        start += draw(st.integers(min_value=0, max_value=4000))
        length = draw(st.integers(min_value=1, max_value=8000))
        cues.append((start, start + length, draw(_names), " ".join(draw(_words))))
    return cues


@settings(**PROPERTY)
@given(
    cues=_cue_lists(), encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]), eol=st.sampled_from(["\n", "\r\n"])
)
def test_random_subrip_files_round_trip(cues, encoding, eol):
    subtitles = [
        srt.Subtitle(
            i + 1,
            datetime.timedelta(milliseconds=s),
            datetime.timedelta(milliseconds=e),
            f"{who}: {text}" if who else text,
        )
        for i, (s, e, who, text) in enumerate(cues)
    ]
    raw = srt.compose(subtitles, reindex=False, eol=eol).encode(encoding)
    t = read_transcript("g/random.srt", raw)
    assert [(c.start, c.end, c.speaker, c.text) for c in t.cues] == [
        (s / 1000, e / 1000, who or "", text) for s, e, who, text in cues
    ]


@settings(**PROPERTY)
@given(raw=st.binary(max_size=600), suffix=st.sampled_from([".srt", ".vtt", ".csv", ".tsv", ".json", ".txt"]))
def test_random_bytes_never_crash_the_reader(raw, suffix):
    try:
        t = read_transcript(f"g/random{suffix}", raw)
    except IngestError as exc:
        assert str(exc).startswith(f"g/random{suffix}")
    else:
        assert t.cues and all(c.text and c.end >= c.start >= 0 for c in t.cues)


@settings(**PROPERTY)
@given(
    prefix=st.sampled_from(["WEBVTT\n\n", "1\n", '{"segments": [', "start,end,speaker,text\n", ""]),
    body=st.text(alphabet=st.sampled_from(list('0123456789:,.-> \n\tWEBVTT<v>Maya{}[]"')), max_size=300),
)
def test_random_transcript_like_text_never_crashes_the_reader(prefix, body):
    for suffix in (".srt", ".vtt", ".csv", ".json"):
        try:
            read_transcript(f"g/x{suffix}", (prefix + body).encode())
        except IngestError:
            pass


def test_webvtt_and_diarisation_json_agree_on_the_same_cues():
    vtt_text = "WEBVTT\n\n" + "\n".join(
        f"00:00:{i:02d}.000 --> 00:00:{i + 1:02d}.500\n<v {who}>{text}\n"
        for i, (who, text) in enumerate([("Maya", "One."), ("Tobias", "Two.")])
    )
    segments = {
        "segments": [
            {"start": 0, "end": 1.5, "speaker": "Maya", "text": "One."},
            {"start": 1, "end": 2.5, "speaker": "Tobias", "text": "Two."},
        ]
    }
    a = read_transcript("g/a.vtt", vtt_text.encode())
    b = read_transcript("g/b.json", json.dumps(segments).encode())
    assert cue_tuples(a) == cue_tuples(b)


def test_a_byte_order_mark_alone_is_not_a_transcript():
    with pytest.raises(IngestError):
        read_transcript("g/x.srt", codecs.BOM_UTF8)
