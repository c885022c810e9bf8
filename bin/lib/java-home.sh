# Sourced by the scripts in bin/: exports JAVA_HOME pointing at a JDK 25 or newer, or exits with
# a message that says how to get one. The system's default java may be older (FFM needs 22+).
nixl4j_java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'
}

nixl4j_find_java() {
  local candidate
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/*25* /usr/lib/jvm/*; do
    # a JDK, not a runtime: the scripts compile (bin/nixl4j, Maven)
    [[ -n "$candidate" && -x "$candidate/bin/java" && -x "$candidate/bin/javac" ]] || continue
    local major
    major=$(nixl4j_java_major "$candidate")
    if [[ -n "$major" && "$major" -ge 25 ]]; then
      export JAVA_HOME="$candidate"
      return 0
    fi
  done
  echo "nixl4j needs a JDK 25 or newer (java.lang.foreign); none found in JAVA_HOME or /usr/lib/jvm." >&2
  echo "Install one (for example Eclipse Temurin 25) and set JAVA_HOME to it." >&2
  exit 1
}

nixl4j_find_java
