"""Read settings with defaults."""

DEFAULTS = {"timeout_s": 30, "retries": 3}


def timeout(config):
    return config.get("timeout", DEFAULTS["timeout_s"])


def retries(config):
    return config.get("retries", DEFAULTS["retries"])
