"""A full-scale synthetic benchmark, shaped like the real RESCUE-BENCH release.

``clips.build_clips`` is pure: from a seed it builds clips (skeleton rows, an LLM-like
draft, one revision per annotator with seeded disagreement, and the gold that a
per-field majority of those revisions gives), without touching the database.
``store.generate`` writes them into a project in one transaction, the way an
adjudicated project would look: Clip + Cues + Rows, Draft / Revision / Gold per
row, a submitted Assignment per (clip, annotator).

Shape (from the real release and its public sample): 191 clips,
7,079 rows, 174 couple and 17 family clips; couple clips about 34 rows with two
participants, family clips about 71 rows with four or more. Clips are named
as the release names them (docs/releases.md, on splits): ``<couple>/<clip>``, several
clips per couple, and ``family_therapy/<NNN>/merged``, one clip per family,
each ``<NNN>`` a different family. Nobody appears in two couples or two
families (the splits join groups that share a participant). Everything is drawn
from ``random.Random`` instances derived from the seed, so the same seed gives
the same documents (the draft does not depend on the number of annotators).
Dialogue is assembled from the small word lists below: clearly synthetic.

Every generated document follows the platform's regular convention
(the row schema's regular spelling, docs/rescue-format.md) and passes ``schema.check_clip`` with no errors
and no warnings; ``generate`` checks that before it writes anything.
"""

from .clips import (
    SyntheticClip,
    SyntheticError,
    build_clips,
    check_generated,
    drafted_clip,
    family_clip_count,
    keep_probability,
)
from .shape import FIRST_NAMES, RELEASE_CLIPS, RELEASE_FAMILY_CLIPS, RELEASE_ROWS, WEIGHTS
from .store import annotator_usernames, ensure_annotators, generate, store_clips, store_transcripts

__all__ = [
    "FIRST_NAMES",
    "RELEASE_CLIPS",
    "RELEASE_FAMILY_CLIPS",
    "RELEASE_ROWS",
    "WEIGHTS",
    "SyntheticClip",
    "SyntheticError",
    "annotator_usernames",
    "build_clips",
    "check_generated",
    "drafted_clip",
    "ensure_annotators",
    "family_clip_count",
    "generate",
    "keep_probability",
    "store_clips",
    "store_transcripts",
]
