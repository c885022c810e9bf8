# Sourced by the scripts in bin/: nixl4j_newest prints the newest modification time (seconds since
# the epoch) of the files that find selects from its arguments, or 0 when there are none; the
# launchers compare it to decide whether to rebuild.
nixl4j_newest() {
  find "$@" -type f -printf '%T@\n' 2>/dev/null | sort -n | tail -n 1 | grep . || echo 0
}
