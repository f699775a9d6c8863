"""Hard pairs for the free-text measures, written for this project in the style of the release's annotations.

Every field has paraphrases (two coders saying the same thing in other words) and same-topic pairs of
different meaning (two coders writing about the same moment and the same topic, meaning different things).
The easy case (paraphrases against unrelated texts) is in test_agreement_semantic.py; this is the case that
decides whether gold built from free text is usable.
"""

SAME = [
    ("internal_emotion", "feels hopeful about the talk", "is optimistic that the conversation will help"),
    ("internal_emotion", "ashamed of how she spoke to him", "embarrassed by the way she talked to her husband"),
    ("internal_emotion", "frustrated that nothing changes", "fed up because things stay the same"),
    ("internal_emotion", "afraid he will leave", "scared her partner is going to walk out"),
    ("viewpoint", "believes she means it this time", "trusts that her promise is sincere now"),
    ("viewpoint", "thinks the therapist takes his side", "sees the therapist as siding with her husband"),
    ("viewpoint", "sees his working late as avoidance", "reads his long hours as a way to stay away from home"),
    ("attitude", "warm and forgiving toward her", "kind and ready to forgive her"),
    ("attitude", "dismissive of his apology", "brushes off his apology as meaningless"),
    ("attitude", "protective of her son", "shields the boy from criticism"),
    ("tone_of_voice", "calm and steady", "even, composed voice"),
    ("tone_of_voice", "sarcastic, mocking", "mocking tone with irony"),
    ("facial_expressions", "smiles softly at her partner", "gives her partner a gentle smile"),
    ("facial_expressions", "frowns, brows drawn together", "knits his brows in a frown"),
    ("body_posture", "leans toward her, open posture", "turns his body toward her, arms relaxed"),
    ("interaction_behavior", "reassures him that she is staying", "tells him she is not going anywhere"),
    ("interaction_behavior", "interrupts her to correct the story", "cuts in to give his own version of events"),
    ("relation_reason", "she pursues, he withdraws into silence", "her pushing is met by his shutting down"),
    ("strategy_content", "reflects her fear back to her", "names the fear she is expressing"),
    (
        "strategy_content",
        "asks him to say it to her directly",
        "invites him to speak to his wife rather than to the therapist",
    ),
]
DIFFERENT = [
    ("internal_emotion", "feels hopeful about the talk", "dreads the talk"),
    ("internal_emotion", "ashamed of how she spoke to him", "feels justified in how she spoke to him"),
    ("internal_emotion", "frustrated that nothing changes", "relieved that nothing changes"),
    ("internal_emotion", "afraid he will leave", "wishes he would leave"),
    ("viewpoint", "believes she means it this time", "believes her promises are empty"),
    ("viewpoint", "thinks the therapist takes his side", "thinks the therapist is fair to both of them"),
    ("viewpoint", "sees his working late as avoidance", "sees his working late as providing for the family"),
    ("attitude", "warm and forgiving toward her", "cold and unforgiving toward her"),
    ("attitude", "dismissive of his apology", "moved by his apology"),
    ("attitude", "protective of her son", "critical of her son"),
    ("tone_of_voice", "calm and steady", "calm on the surface but shaking"),
    ("tone_of_voice", "sarcastic, mocking", "sincere, earnest"),
    ("facial_expressions", "smiles softly at her partner", "smiles tightly, not meeting her partner's eyes"),
    ("facial_expressions", "frowns, brows drawn together", "raises brows in surprise"),
    ("body_posture", "leans toward her, open posture", "leans away from her, arms crossed"),
    ("interaction_behavior", "reassures him that she is staying", "threatens him that she is leaving"),
    ("interaction_behavior", "interrupts her to correct the story", "lets her finish the story before speaking"),
    ("relation_reason", "she pursues, he withdraws into silence", "he pursues, she withdraws into silence"),
    ("strategy_content", "reflects her fear back to her", "challenges her fear as unfounded"),
    ("strategy_content", "asks him to say it to her directly", "asks him to stop speaking to her for now"),
]


def rows():
    """As judged-pair records: field, text_a, text_b, judgement."""
    return [
        {"field": f, "text_a": a, "text_b": b, "judgement": j}
        for j, pairs in (("same", SAME), ("different", DIFFERENT))
        for f, a, b in pairs
    ]
