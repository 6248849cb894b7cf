"""Running a project's tests in a sandbox and reading the results."""
