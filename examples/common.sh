# Sourced by an example's run.sh (from the checkout's root): the build and
# setup every example's run shares.
#
#   build_example NAME   builds foldc and NAME_driver into build/ (the log in
#                        build/NAME-run/build.log, its tail on failure), and
#                        sets `out` (build/NAME-run, created) and `driver`.
build_example() {
  local name=$1
  out=build/$name-run
  mkdir -p "$out"
  echo "== building foldc and examples/$name (log: $out/build.log)" >&2
  if ! bash scripts/build.sh foldc "${name}_driver" > "$out/build.log" 2>&1; then
    tail -30 "$out/build.log" >&2
    exit 1
  fi
  driver=build/examples/${name}_driver
}
