"""generate stage of VerifAI Desktop."""
