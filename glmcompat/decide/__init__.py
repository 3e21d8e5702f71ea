"""Pure decisions: the check rules, the resolvelib provider over a source protocol, explanations."""
