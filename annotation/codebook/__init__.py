"""The project's living codebook: guidance leads attach to labels, versioned with the project.

The taxonomy (``annotation.taxonomy``) says what every label means and gives the
boundary rules that hold for every project. A project's team also learns, from
its own disagreements, where the lines fall in its material ("accusation vs
disclosure: a complaint that names what the other does wrong is an accusation,
even when it mentions a feeling"). Leads write that down as *guidance*: a text
attached to one label, or to a set of labels of one field (utterance type,
support strategy, relation pattern) that it separates, for one scenario or for
every scenario.

Guidance is versioned (``models.GuidanceVersion``): each change makes a new
version holding every entry then in force, with who changed it, when and why.
Every revision saved by an annotator, and every gold write, records the version
in force at that moment; a release records the versions its rows were made
under and ships the text of the version in force when it was frozen.

Guidance shows wherever a label is chosen (the editor's label picker and its
inline rules, on the workspace and adjudication pages), beside the taxonomy's
rules and marked as the project's, and on the project's guide page. It is
written by leads only, so showing it to every coder of a project reveals
nothing of another coder's work.

Modules: ``services`` (writes), ``selectors`` (reads), ``api``, ``views``, ``urls``.
"""
