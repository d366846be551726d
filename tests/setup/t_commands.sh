#!/bin/sh
# t_commands.sh — the README's two commands on a machine that is not
# empty: `make run` on a port that is already taken says so (and how to
# pick another) before it prints anything else, and the dependency step
# installs only the packages that are absent, never upgrading one that is
# there (mk/deps.sh, run here against a stubbed dpkg-query and apt-get).
# Prints TAP.
#   usage: sh tests/setup/t_commands.sh BUILD_DIR
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
TMP=$(mktemp -d)
n=0
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1))
    echo "not ok $n - $1"
    shift
    for line in "$@"; do printf '%s\n' "$line" | sed 's/^/#   /'; done
}
check() { # NAME CONDITION-STATUS DETAIL...
    name=$1; rc=$2; shift 2
    if [ "$rc" -eq 0 ]; then ok "$name"; else not_ok "$name" "$@"; fi
}

# --- make run on a busy port -----------------------------------------------
"$BUILD/attnd" --port 0 2>"$TMP/daemon.err" &
pid=$!
port=""
for _ in $(seq 50); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$TMP/daemon.err" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { not_ok "a daemon to hold a port started" "$(cat "$TMP/daemon.err")"; echo "1..$n"; exit 1; }

make -s -C "$ROOT" run BUILD="$BUILD" PORT="$port" >"$TMP/run.out" 2>"$TMP/run.err" </dev/null
rc=$?
[ "$rc" -ne 0 ]
check "make run on a busy port fails" $? "exit status $rc"
grep -q "port $port is in use" "$TMP/run.err"
check "  saying the port is in use" $? "$(cat "$TMP/run.err")"
grep -q "make run PORT=" "$TMP/run.err" && grep -q -- "--port 0" "$TMP/run.err"
check "  and how to pick another (PORT=, --port 0)" $? "$(cat "$TMP/run.err")"
! grep -q "try:" "$TMP/run.out"
check "  without first printing the curl line to try" $? "$(cat "$TMP/run.out")"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=""

# --- the dependency step -----------------------------------------------------
# Stubs: root, an apt-get that records its arguments, a dpkg-query that
# reports every package installed except jq and python3-numpy, and a
# pkg-config that finds nothing (so the step goes on to look at packages).
mkdir -p "$TMP/bin"
cat >"$TMP/bin/id" <<'EOF'
#!/bin/sh
echo 0
EOF
cat >"$TMP/bin/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$TMP/apt.log"
EOF
cat >"$TMP/bin/dpkg-query" <<'EOF'
#!/bin/sh
for pkg; do :; done
case "$pkg" in
    jq | python3-numpy) exit 1 ;;
    *) printf 'install ok installed' ;;
esac
EOF
cat >"$TMP/bin/pkg-config" <<'EOF'
#!/bin/sh
exit 1
EOF
chmod +x "$TMP/bin/"*
PATH="$TMP/bin:$PATH" sh "$ROOT/mk/deps.sh" test >"$TMP/deps.out" 2>&1
rc=$?
check "the dependency step with two packages absent succeeds" "$rc" "$(cat "$TMP/deps.out")"
install=$(grep '^install' "$TMP/apt.log" 2>/dev/null)
[ -n "$install" ]
check "  and runs apt-get install" $? "apt-get calls: $(cat "$TMP/apt.log" 2>/dev/null)"
echo "$install" | grep -q -- "--no-upgrade"
check "  with --no-upgrade" $? "$install"
pkgs=$(echo "$install" | tr ' ' '\n' | grep -v '^-' | grep -v '^install$' | sort | tr '\n' ' ')
[ "$pkgs" = "jq python3-numpy " ]
check "  naming only the absent packages" $? "packages: $pkgs"
grep -q "not installed" "$TMP/deps.out" && grep -q "jq python3-numpy" "$TMP/deps.out"
check "  after saying what it will install" $? "$(cat "$TMP/deps.out")"

rm -f "$TMP/apt.log"
cat >"$TMP/bin/dpkg-query" <<'EOF'
#!/bin/sh
printf 'install ok installed'
EOF
PATH="$TMP/bin:$PATH" sh "$ROOT/mk/deps.sh" test >"$TMP/deps.out" 2>&1
rc=$?
check "with every package installed the step succeeds" "$rc" "$(cat "$TMP/deps.out")"
[ ! -s "$TMP/apt.log" ]
check "  and calls no apt-get at all" $? "apt-get calls: $(cat "$TMP/apt.log" 2>/dev/null)"

echo "1..$n"
