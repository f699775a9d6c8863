"""Assignment: which annotator codes which clip, planned in bulk.

``annotation.starting`` (the shared core: the record's rounds and adjudication start assignments too) creates one
assignment and its revisions (and hands one to another annotator), and ``annotation.selectors.annotators`` says who
may be assigned; here ``services`` plans and writes assignments in bulk under the study design and the
qualification rules (it asks ``record`` who is qualified); ``selectors`` reads how far each annotator is;
``views``, ``api``, ``forms`` and ``urls`` are the lead's assign page and endpoints.


An assignment gives one annotator their own revision of every row of a clip:
a copy of the LLM draft (``from_draft``, the published workflow) or an empty
document (``from_empty``, the calibration subset that measures agreement
without the draft's anchoring). A clip never gets the same annotator twice.
Once a clip is assigned its row skeleton is locked: every coder annotates the
same units.

Which clips start empty is part of the study design: unless the lead names
them, the project's ``from_empty_share`` reserves that share of the clips of
each scenario, counted over every clip assigned so far (so that assigning in
batches keeps the share), chosen by the seed. All coders of a reserved clip
code it from empty: the anchoring effect compares coders' agreement among
themselves with and without the draft, which needs two or more coders on the
same rows in each condition. Each assignment records how its mode was chosen
(``Assignment.design``).
"""
