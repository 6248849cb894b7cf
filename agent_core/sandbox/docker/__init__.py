"""The Docker sandbox backend, the only package importing the `docker` SDK.

- `engine.py`: which engine (DOCKER_HOST + TLS, docker contexts, the default
  socket), a client for it, whether it can run the sandbox now;
- `limits.py`: the container options that lock a run down, and which limit a
  run hit (pure);
- `run.py`: `DockerSandbox`, one fresh container per command, removed in
  every outcome;
- `transfer.py`: the workspace copied in and out for an engine elsewhere;
- `build.py`: the sandbox image, built from a local base with no pull;
- `sweep.py`: removal of containers a crashed process left.

Nothing is imported here, so that loading one module does not load the rest.
"""
