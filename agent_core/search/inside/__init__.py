"""Scripts copied into the sandbox and run by the project's interpreter (Python 3.7, stdlib and pytest only)."""
