"""Small helpers every layer may use, importing nothing of treebench: wording of messages
(`text`), atomic files and file keys (`atomic`), safe YAML (`safe_yaml`), sweep values
(`sweeps`) and the ranges of input integers (`ranges`)."""
