"""The tester agent: writes pytest / hypothesis tests for a target, repairs them, judges failures."""
