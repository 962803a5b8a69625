"""ablations: one small module per research question (built on `experiments`; a later issue)."""
