"""What a failing test run says about its fault: the coverage spectrum, hung tests, the failing tests' inputs."""
