"""The commands, one module each: the table of their names (what ``glmcompat --help`` lists and
:func:`glmcompat.cli.main` dispatches through, importing a command's module only when it runs). A leaf, imported on
every run: keep it import-free.
"""

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "lock": ("glmcompat.cli.commands.lock", "resolve the coupled core for a GPU target and write host-free lockfiles"),
    "upgrade": ("glmcompat.cli.commands.upgrade", "show the newest safe core set for a target and why newer ones are skipped"),
    "check": ("glmcompat.cli.commands.check", "check a lockfile or requirements file for a GPU target"),
    "verify": ("glmcompat.cli.commands.verify", "prove that the installed stack loads and runs its kernels on this GPU"),
    "explain": ("glmcompat.cli.commands.verify", "explain known failure signatures in a server log"),
    "pip": ("glmcompat.cli.commands.pip", "install into a live environment without breaking its compiled core; print its core as constraints"),
    "abi": ("glmcompat.cli.commands.abi", "compare an extension's torch symbols with a torch release, from the wheels"),
    "arch": ("glmcompat.cli.commands.abi", "list the GPU code (SASS/PTX) in a wheel's extensions"),
    "matrix": ("glmcompat.cli.commands.matrix", "validate, show, describe or extend the compatibility matrix"),
    "targets": ("glmcompat.cli.commands.matrix", "list the GPU targets"),
    "completion": ("glmcompat.cli.commands.completion", "print the shell completion script (bash, zsh or fish)"),
}
HELP = "show the help of glmcompat, or of a command (`glmcompat help check`)"
# the stack `glmcompat lock` locks when none is named (read on the start-up path: the lock speculation predicts its output)
DEFAULT_STACK = "glm5-sglang-0.5.9"
