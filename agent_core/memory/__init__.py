"""Memory of past failures and successful patterns."""
