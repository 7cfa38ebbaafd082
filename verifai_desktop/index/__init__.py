"""index stage of VerifAI Desktop."""
