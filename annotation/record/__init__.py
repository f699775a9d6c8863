"""The annotator's record: qualification on gold before production work, known-answer checks during
it, and the per-annotator dashboard a lead reads while the study runs.

- ``models``: training clips, pass rules, attempts, waivers and send-backs, stored dashboards.
- ``scoring``: an attempt's scores per field and its row-by-row feedback against the gold.
- ``services`` (writes): rules, training material, rounds, waivers, known-answer checks.
- ``selectors`` (reads): who is qualified, an annotator's own record.
- ``dashboard``: the lead's per-coder figures, computed in a Celery task and stored.
- ``release``: the anonymised coders' record a release's ``stats.json`` carries.

Qualification rounds and known-answer checks are ``Assignment`` rows with a ``purpose`` other than
production: the default manager (``Assignment.objects``) and the agreement scope
(``agreement.scope.with_left_out``) leave them out, so no production figure, adjudication or release
ever reads them.
"""
