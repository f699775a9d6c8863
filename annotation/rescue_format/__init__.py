"""Lossless import and export of the RESCUE-BENCH release format.

``reader`` turns files into clip documents with their file/line positions,
``importer`` validates them all and writes them in one transaction,
``exporter`` writes a project's clips back, key order and all.
"""
