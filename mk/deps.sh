#!/bin/sh
# Make sure the dependencies are present: `mk/deps.sh` for building and
# serving, `mk/deps.sh test` for the test suites as well. As root on a
# Debian/Ubuntu machine, install the missing ones; otherwise print the exact
# apt-get line and stop.
PKGS="build-essential pkg-config libmicrohttpd-dev libgnutls28-dev libjansson-dev libopenblas-dev libcmocka-dev zlib1g-dev curl jq openssl"
TEST_PKGS="ca-certificates libxml2-utils w3c-sgml-lib prometheus python3 python3-prometheus-client python3-numpy python3-jsonschema python3-torch"
SVG_DTD=/usr/share/xml/w3c-sgml-lib/schema/dtd/REC-SVG11-20110816/svg11.dtd

missing=""
pkg-config --exists openblas jansson libmicrohttpd gnutls cmocka zlib 2>/dev/null || missing=yes
for tool in cc curl jq openssl; do command -v "$tool" >/dev/null 2>&1 || missing=yes; done
if [ "$1" = test ]; then
    PKGS="$PKGS $TEST_PKGS"
    for tool in xmllint promtool; do command -v "$tool" >/dev/null 2>&1 || missing=yes; done
    [ -r "$SVG_DTD" ] && [ -r /etc/ssl/certs/ca-certificates.crt ] || missing=yes
    /usr/bin/python3 -c 'import prometheus_client.parser, numpy, jsonschema, torch' 2>/dev/null || missing=yes
fi
[ -z "$missing" ] && exit 0
# only the packages that are not installed: an installed one is never
# upgraded (a shared machine's ca-certificates stays as it is)
if command -v dpkg-query >/dev/null 2>&1; then
    absent=""
    for pkg in $PKGS; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
            grep -q "install ok installed" || absent="$absent $pkg"
    done
    PKGS=${absent# }
    [ -n "$PKGS" ] || exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "attnd needs these packages, which are not installed; installing them"
    echo "(nothing already installed is upgraded): $PKGS"
    DEBIAN_FRONTEND=noninteractive apt-get update -q && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        --no-upgrade $PKGS
    exit $?
fi
echo "attnd needs these packages; install them with:" >&2
echo "  sudo apt-get install -y --no-upgrade $PKGS" >&2
exit 1
