"""Ingest stage of VerifAI Desktop: file in, Document and Chunks out, then catalog and indexes.

Modules (nothing heavy is imported here; import the module you need):

- ``formats``: :func:`~verifai_desktop.ingest.formats.detect_format` (content sniffing).
- ``parse``: :func:`~verifai_desktop.ingest.parse.parse_file` and
  :class:`~verifai_desktop.ingest.parse.ParserPool` (worker process with a per-file timeout).
- ``pdf``, ``office`` (DOCX, PPTX), ``epub``, ``text`` (MD, TXT): one parser per format.
- ``ocr``: :func:`~verifai_desktop.ingest.ocr.recognise_pages` (PDF pages without a text
  layer, read by Tesseract or RapidOCR in the parser worker).
- ``embedded``: :func:`~verifai_desktop.ingest.embedded.recognise_embedded` (the images of
  DOCX, PPTX and EPUB files, read by the same engines where they are shown).
- ``unread``: :func:`~verifai_desktop.ingest.unread.unread_summary` (the pages and images OCR
  left unread, in one line).
- ``pdf_layout``: where a PDF page's indexed text is drawn
  (:func:`~verifai_desktop.ingest.pdf_layout.span_rects`, the evidence highlight).
- ``sentences``: :func:`~verifai_desktop.ingest.sentences.split_sentences` (sentencex).
- ``chunking``: :func:`~verifai_desktop.ingest.chunking.chunk_document` and ``chunk_text``.
- ``references``: :func:`~verifai_desktop.ingest.references.tag_references` (reference lists
  and bibliographies).
The catalog, collection and ingest run live in :mod:`verifai_desktop.store`.
"""
