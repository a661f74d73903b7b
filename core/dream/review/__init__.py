"""What a dream proposes and what the person does with it: proposals, apply, undo, promotion, provenance."""
