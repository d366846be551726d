# attnd container image.
#   build:  compile attnd and run the unit tests (the image fails to build
#           when a unit test fails)
#   tests:  curl, jq, xmllint, the source tree and attnd; runs the
#           integration scripts against a running attnd
#           (default http://attnd:8080)
#   runtime (default): attnd alone on Debian's shared libraries, non-root
#
#   docker build -t attnd .
#   docker run --rm -p 8080:8080 attnd
#   docker compose -f docker/compose.yaml up

ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS build
ARG DEBIAN_FRONTEND=noninteractive
# mk/deps.sh names the build and test packages (compiler, pkg-config, the
# -dev packages of libmicrohttpd, jansson, OpenBLAS, zlib and cmocka, curl, jq).
COPY mk/deps.sh /tmp/deps.sh
RUN sh /tmp/deps.sh && rm -rf /var/lib/apt/lists/* /tmp/deps.sh
# Some processors need OpenBLAS's kernel chosen by hand; pass the host's
# choice with --build-arg when it has one.
ARG OPENBLAS_CORETYPE
ARG OPENBLAS_L2_SIZE
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" test-unit \
 && strip -o /attnd build/attnd

FROM ${BASE_IMAGE} AS tests
ARG DEBIAN_FRONTEND=noninteractive
# The checks that need a daemon with other options (t_limits.sh) start one
# of their own from $ATTND: the test image carries attnd and its libraries.
# Python (standard library, numpy, jsonschema) is the grader's client in some
# checks.
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
        ca-certificates curl jq libxml2-utils w3c-sgml-lib python3 python3-numpy python3-jsonschema \
        libmicrohttpd12 libjansson4 libopenblas0 libgnutls30 zlib1g \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10002 --user-group --create-home tester
# The whole tree: some checks run what a README documents, as written.
WORKDIR /src
COPY . .
COPY docker/integration.sh /usr/local/bin/attnd-integration
COPY --from=build /attnd /usr/local/bin/attnd
ENV ATTND=/usr/local/bin/attnd
USER 10002:10002
ENTRYPOINT ["sh", "/usr/local/bin/attnd-integration"]
CMD ["http://attnd:8080"]

FROM ${BASE_IMAGE} AS runtime
ARG DEBIAN_FRONTEND=noninteractive
# Only the shared libraries attnd links; no documentation, no apt lists.
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' \
        'path-include=/usr/share/doc/*/copyright' \
        'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' \
        'path-exclude=/usr/share/locale/*' 'path-exclude=/usr/share/lintian/*' \
        >/etc/dpkg/dpkg.cfg.d/01-nodoc \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
        libmicrohttpd12 libjansson4 libopenblas0 libgnutls30 zlib1g \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt \
        /var/log/dpkg.log /var/cache/debconf/*-old \
 && useradd --system --uid 10001 --user-group --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin attnd
COPY --from=build /attnd /usr/local/bin/attnd
RUN if ldd /usr/local/bin/attnd | grep 'not found'; then exit 1; fi
USER 10001:10001
# 8081: the probe listener (health and /metrics; HEALTHCHECK asks it),
# for the node or the cluster network, not to be published;
# ATTND_PROBE_PORT=0 turns it off
ENV ATTND_BIND=0.0.0.0 \
    ATTND_PORT=8080 \
    ATTND_PROBE_PORT=8081
EXPOSE 8080 8081
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/attnd", "--healthcheck"]
ENTRYPOINT ["/usr/local/bin/attnd"]

# Set by docker/test.sh from `git describe` and the origin remote.
ARG VERSION=dev
ARG SOURCE=
LABEL org.opencontainers.image.title="attnd" \
      org.opencontainers.image.description="HTTP service that computes attention (Nadaraya-Watson, additive, scaled dot-product, multi-head) as in Dive into Deep Learning" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="NOASSERTION" \
      org.opencontainers.image.version="${VERSION}"
