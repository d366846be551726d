#!/bin/sh
# Make sure the base image debian:bookworm-slim is present. Pull it when a
# registry answers; when none does, build an equivalent locally with
# mmdebstrap (minbase, the slim image's dpkg excludes) from this machine's
# Debian mirror, and `docker import` it under the same name.
#
#   usage: sh docker/base-image.sh
#   env:   DOCKER          engine command line (default: docker)
#          ATTND_BASE_IMAGE  image to provide (default: debian:bookworm-slim)
#          ATTND_MIRROR    Debian mirror to use instead of /etc/apt's
#                          (e.g. http://deb.debian.org/debian)
set -u

DOCKER=${DOCKER:-docker}
IMAGE=${ATTND_BASE_IMAGE:-debian:bookworm-slim}
SUITE=bookworm

say() { echo "base-image: $*" >&2; }

# The "deb URI SUITE main" lines of this machine's enabled Debian sources for
# $SUITE, $SUITE-updates and $SUITE-security, from one-line *.list files and
# deb822 *.sources files. Other repositories (other suites) are left out.
debian_sources() {
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
            awk -v s="$SUITE" '$1 == "deb" && ($3 == s || $3 == s "-updates" ||
                $3 == s "-security") { print "deb " $2 " " $3 " main" }'
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v s="$SUITE" '
            function flush(   i, j, nu, ns, u, x) {
                if (types ~ /(^| )deb( |$)/ && enabled !~ /^[Nn]o/) {
                    nu = split(uris, u, " "); ns = split(suites, x, " ")
                    for (i = 1; i <= nu; i++)
                        for (j = 1; j <= ns; j++)
                            if (x[j] == s || x[j] == s "-updates" ||
                                x[j] == s "-security")
                                print "deb " u[i] " " x[j] " main"
                }
                types = uris = suites = enabled = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
              if (key == "types") types = $0
              else if (key == "uris") uris = $0
              else if (key == "suites") suites = $0
              else if (key == "enabled") enabled = $0 }
            END { flush() }' "$f"
    done
}

if timeout 30 $DOCKER image inspect "$IMAGE" >/dev/null 2>&1; then
    say "$IMAGE is present"
    exit 0
fi
say "pulling $IMAGE"
if timeout 300 $DOCKER pull "$IMAGE" >&2; then
    exit 0
fi

say "no registry answers; building $IMAGE with mmdebstrap"
if ! command -v mmdebstrap >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        say "mmdebstrap is missing: install it (apt-get install mmdebstrap)"
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    lock="-o DPkg::Lock::Timeout=300"
    timeout 900 apt-get install -y -q $lock --no-install-recommends mmdebstrap \
        >/dev/null 2>&1 ||
        { timeout 300 apt-get update -q $lock >/dev/null 2>&1 &&
          timeout 900 apt-get install -y -q $lock --no-install-recommends \
              mmdebstrap >&2; } || exit 1
fi

if [ -n "${ATTND_MIRROR:-}" ]; then
    sources="deb $ATTND_MIRROR $SUITE main
deb $ATTND_MIRROR $SUITE-updates main"
else
    sources=$(debian_sources | awk '!seen[$0]++')
fi
if [ -z "$sources" ]; then
    sources="deb http://deb.debian.org/debian $SUITE main
deb http://deb.debian.org/debian $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main"
fi
say "sources:"
echo "$sources" | sed 's/^/  /' >&2

# A merged /usr set up by mmdebstrap's own hook (the usrmerge package would
# leave perl behind), and what the official slim image leaves out:
# documentation, man pages and translations (copyright files stay).
set -- \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/groff/*' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --dpkgopt='path-exclude=/usr/share/linda/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --aptopt='Acquire::Languages "none"' \
    --aptopt='APT::AutoRemove::SuggestsImportant "false"'

# A pipeline's status is its last command's: keep mmdebstrap's in a file.
status=$(mktemp)
log=$(mktemp)
trap 'rm -f "$status" "$log"' EXIT
echo 1 >"$status"
{
    timeout 900 mmdebstrap --quiet --variant=minbase --format=tar "$@" \
        "$SUITE" - "$sources" 2>"$log"
    echo $? >"$status"
} | timeout 900 $DOCKER import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    --message "mmdebstrap --variant=minbase $SUITE" \
    - "$IMAGE" >/dev/null
rc=$?
if [ "$(cat "$status")" != 0 ] || [ "$rc" != 0 ]; then
    say "mmdebstrap or import failed; mmdebstrap said:"
    tail -n 30 "$log" >&2
    timeout 30 $DOCKER image rm "$IMAGE" >/dev/null 2>&1
    exit 1
fi
say "built $IMAGE: $($DOCKER image inspect --format '{{.Size}}' "$IMAGE") bytes"
