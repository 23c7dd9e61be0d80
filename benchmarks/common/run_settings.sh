# Sourced by the room scripts that make hopbench runs (from the repository root): where the
# runs, the cache and the data are (RUNS, CACHE, DATA, PYTHON from the environment, else these
# defaults), and `common`, the overrides every such run is given.
RUNS=${RUNS:-runs}
CACHE=${CACHE:-$HOME/.cache/hopbench}
DATA=${DATA:-../shared/datasets}
PY=${PYTHON:-python3}
common=("paths.runs_dir=$RUNS" "paths.cache_dir=$CACHE" "paths.data_dir=$DATA" progress=false)
