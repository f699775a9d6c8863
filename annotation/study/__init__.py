"""The study design of a project: the rules that decide how much of the gold is human.

Which work counts as coded (the work scope), how many coders must submit
before a clip's gold can be decided, the share of clips coded from empty to
measure the draft's pull, and what counts as a quick confirmation of a draft
row. Leads set them on the study-design page, through the API or with
``manage.py study_design``; every change is audited with the project's history.
"""
