"""The explainer: one short plain-text call saying why a verified change fixes the failure."""
