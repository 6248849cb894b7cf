"""The verifier (seeds 000's critic and 001's verifier): a model's score of a verified diff against the goal."""
