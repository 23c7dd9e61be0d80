"""The command-line side of `hopbench`'s subcommands (entry tier): each module's `main(argv)`
parses arguments, calls the library or the harness, prints, and returns the exit code."""
