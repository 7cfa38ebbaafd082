"""ingest stage of VerifAI Desktop."""
