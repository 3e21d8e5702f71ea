"""The pure model: names, GPU code rule, platform environments, findings, errors. No I/O."""
