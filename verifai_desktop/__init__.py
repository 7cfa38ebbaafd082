"""VerifAI Desktop: cited answers from your own documents, every sentence verified offline."""

__version__ = "0.1.0"
