"""evaluate stage of VerifAI Desktop."""
