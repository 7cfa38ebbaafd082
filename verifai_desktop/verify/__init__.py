"""verify stage of VerifAI Desktop."""
