"""The assembly: a run config to objects, the run loop, the run store, the grid (`hopbench
paper`) and the upgrades of older runs; entry points (hopbench.run, hopbench.cli) call it."""
