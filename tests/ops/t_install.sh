#!/bin/sh
# t_install.sh — `make install` and `make uninstall` into a staging
# directory (DESTDIR), with the default PREFIX and with another one: the
# files and their modes, attnd and its man page from the staged tree, and
# a small C program built against the staged library through pkg-config
# (--define-prefix: the prefix is where the .pc file lies) that runs the
# textbook's toy example of dot-product attention.
#   usage: sh tests/ops/t_install.sh BUILD_DIR
BUILD=${1:?usage: t_install.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
BASE=""
. "$ROOT/tests/integration/lib.sh"
PKGCONF=$(command -v pkg-config || command -v pkgconf)
VERSION=$(sed -n 's/.*define ATTND_VERSION "\(.*\)".*/\1/p' api/version.h)

FILES="bin/attnd lib/libattn.a include/attn.h lib/pkgconfig/attn.pc share/man/man8/attnd.8"

# staged_files DIR: the files and links under DIR, relative, sorted
staged_files() {
    (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
}

# --- default PREFIX (/usr/local) -----------------------------------------
DEST=$TMP/stage
if make -s BUILD="$BUILD" DESTDIR="$DEST" install >"$TMP/install.out" 2>&1; then
    ok "make install DESTDIR=... (PREFIX /usr/local)"
else
    not_ok "make install DESTDIR=... (PREFIX /usr/local)" "$(tail -c 600 "$TMP/install.out")"
fi
want=$(for f in $FILES; do echo "usr/local/$f"; done | sort)
check "exactly: $FILES under usr/local" \
    [ "$(staged_files "$DEST")" = "$want" ]
P=$DEST/usr/local
modes=$(stat -c '%a %n' "$P/bin/attnd" "$P/lib/libattn.a" "$P/include/attn.h" \
    "$P/lib/pkgconfig/attn.pc" "$P/share/man/man8/attnd.8" | sed "s|$P/||" | tr '\n' ' ')
check "modes: attnd 755, the rest 644 ($modes)" \
    [ "$modes" = "755 bin/attnd 644 lib/libattn.a 644 include/attn.h 644 lib/pkgconfig/attn.pc 644 share/man/man8/attnd.8 " ]
check "attn.h is the library's header" cmp -s lib/attn.h "$P/include/attn.h"
check "the staged attnd runs (--help)" sh -c "'$P/bin/attnd' --help >'$TMP/help'"
# the offline grader (docs/offline.md): d2l's two keys, no server
echo '{"queries": [[1, 2]], "keys": [[1, 0], [0, 1]], "values": [[1], [2]]}' \
    >"$TMP/dot.json"
check "the staged attnd answers offline: attnd run /attention/dot, output 1.6697615493266569" \
    sh -c "'$P/bin/attnd' run /attention/dot <'$TMP/dot.json' |
        jq -e '.output == [[1.6697615493266569]]' >/dev/null"
check "attn.pc: prefix /usr/local, version $VERSION" \
    sh -c "grep -qx 'prefix=/usr/local' '$P/lib/pkgconfig/attn.pc' &&
        grep -qx 'Version: $VERSION' '$P/lib/pkgconfig/attn.pc'"

# the man page: renders without a warning, and names every option
if LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l \
    "$P/share/man/man8/attnd.8" >"$TMP/man.txt" 2>"$TMP/man.err" &&
    [ ! -s "$TMP/man.err" ] && grep -q 'attnd - HTTP service' "$TMP/man.txt"; then
    ok "man -l attnd.8 renders without a warning"
else
    not_ok "man -l attnd.8 renders without a warning" "$(head -c 400 "$TMP/man.err")"
fi
# JSON in the text keeps its quotes (a bare " is a roff argument quote)
json=$(grep -c '{"status": "ok"}\|{"ready": false}' "$TMP/man.txt")
check "the man page prints {\"status\": \"ok\"} and {\"ready\": false} as JSON" \
    [ "$json" -eq 2 ]
missing=""
for flag in $(sed -n 's/^  \(--[a-z-]*\).*/\1/p' "$TMP/help"); do
    grep -q -- "^ *$flag\b" "$TMP/man.txt" || missing="$missing $flag"
done
check "the man page describes every option of --help${missing:+ (missing:$missing)}" \
    [ -z "$missing" ] && [ "$(grep -c '^  --' "$TMP/help")" -ge 10 ]

# a program against the staged library: d2l's toy example (section 11.3):
# keys all ones (2, 10, 2), values arange(40) as (10, 4) for both examples,
# valid_lens [2, 6] -> outputs [[2, 3, 4, 5]] and [[10, 11, 12, 13]]
cat >"$TMP/toy.c" <<'EOF'
#include <attn.h>
#include <stdio.h>

int main(void) {
    enum { B = 2, NQ = 1, NK = 10, D = 2, DV = 4 };
    double q[B * NQ * D] = {0.3, -1.2, 2.0, 0.5};
    double k[B * NK * D], v[B * NK * DV], out[B * NQ * DV], w[B * NQ * NK];
    for (int i = 0; i < B * NK * D; i++)
        k[i] = 1.0;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < NK * DV; i++)
            v[b * NK * DV + i] = i;
    const int64_t valid_lens[B] = {2, 6};
    attn_mask mask = {.valid_lens = valid_lens,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    attn_status s = attn_dot_forward(out, w, NULL, q, k, v, &mask,
                                     attn_dot_default_scale(D), B, NQ, NK, D,
                                     DV, NULL);
    if (s != ATTN_OK) {
        printf("error: %s\n", attn_status_str(s));
        return 1;
    }
    for (int i = 0; i < B * NQ * DV; i++)
        printf("%.17g%c", out[i], i + 1 < B * NQ * DV ? ' ' : '\n');
    for (int i = 0; i < B * NQ * NK; i++)
        printf("%.17g%c", w[i], i + 1 < B * NQ * NK ? ' ' : '\n');
    return 0;
}
EOF
PKG="$PKGCONF --define-prefix"
flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" $PKG --cflags --libs attn 2>"$TMP/pc.err")
check "pkg-config --define-prefix finds attn in the staging tree ($flags)" \
    sh -c "echo '$flags' | grep -q -- '-I$P/include' &&
        echo '$flags' | grep -q -- '-L$P/lib' && echo '$flags' | grep -q -- '-lattn'"
check "pkg-config --modversion attn is $VERSION" \
    [ "$(PKG_CONFIG_PATH="$P/lib/pkgconfig" $PKG --modversion attn)" = "$VERSION" ]
# shellcheck disable=SC2086
if cc -std=c11 -Wall -Wextra -Werror -pedantic -o "$TMP/toy" "$TMP/toy.c" \
    $flags >"$TMP/cc.out" 2>&1; then
    ok "cc -std=c11 -Wall -Wextra -Werror -pedantic toy.c \$(pkg-config --cflags --libs attn)"
else
    not_ok "cc toy.c \$(pkg-config --cflags --libs attn)" "$(head -c 600 "$TMP/cc.out")"
fi
"$TMP/toy" >"$TMP/toy.out" 2>&1
check "toy example: outputs [2 3 4 5] and [10 11 12 13] (d2l 11.3), to 1e-12" \
    awk 'NR == 1 { split("2 3 4 5 10 11 12 13", want, " ")
            if (NF != 8) exit 1
            for (i = 1; i <= 8; i++) { d = $i - want[i]; if (d < 0) d = -d
                if (d > 1e-12) exit 1 }
            ok = 1 }
        END { exit !ok }' "$TMP/toy.out"
check "  weights: 1/2 over 2 keys, 1/6 over 6 keys, 0 elsewhere" \
    awk 'NR == 2 { for (i = 1; i <= 20; i++) {
            want = i <= 2 ? 0.5 : (i > 10 && i <= 16 ? 1 / 6 : 0)
            d = $i - want; if (d < 0) d = -d
            if (d > 1e-15) exit 1 }
        exit 0 } END { if (NR != 2) exit 1 }' "$TMP/toy.out"

if make -s BUILD="$BUILD" DESTDIR="$DEST" uninstall >"$TMP/uninstall.out" 2>&1 &&
    [ -z "$(staged_files "$DEST")" ]; then
    ok "make uninstall removes every installed file"
else
    not_ok "make uninstall removes every installed file" \
        "left: $(staged_files "$DEST" | tr '\n' ' ')" "$(tail -c 300 "$TMP/uninstall.out")"
fi

# --- another PREFIX ------------------------------------------------------
DEST=$TMP/stage2
make -s BUILD="$BUILD" DESTDIR="$DEST" PREFIX=/opt/attn install >"$TMP/install2.out" 2>&1
want=$(for f in $FILES; do echo "opt/attn/$f"; done | sort)
check "PREFIX=/opt/attn: the same files under opt/attn" \
    [ "$(staged_files "$DEST")" = "$want" ]
check "  and attn.pc says prefix=/opt/attn" \
    grep -qx 'prefix=/opt/attn' "$DEST/opt/attn/lib/pkgconfig/attn.pc"
make -s BUILD="$BUILD" DESTDIR="$DEST" PREFIX=/opt/attn uninstall >/dev/null 2>&1
check "  and uninstall with the same PREFIX removes them" \
    [ -z "$(staged_files "$DEST")" ]
echo "1..$T"
