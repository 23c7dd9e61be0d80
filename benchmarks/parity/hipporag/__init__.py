"""hipporag against its authors' code (README.md: the commit, how to fetch it, the commands)."""
