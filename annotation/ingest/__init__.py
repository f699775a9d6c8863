"""Transcript ingest: turn an uploaded transcript file into a Clip and its Cues.

Layers, from the bytes up:

- ``decoding``: bytes -> text (encoding detection, BOM, line ends), or a refusal;
- ``formats``: text -> ``Transcript`` (timed cues with raw speaker tags), one
  module per format, all tolerating the same real-world mess;
- ``speakers``: raw speaker tags -> the clip's entities (suggestions,
  participants, the confirmed map, ``mapped_cues``);
- ``services``: the one write path used by the upload page, the API and
  ``manage.py ingest``.
"""
