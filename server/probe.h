/*
 * probe.h — the probe listener (--probe-port): a second plain-HTTP port on
 * the --bind address, served by a libmicrohttpd daemon of its own (one
 * polling thread, a few connections, a short timeout), that answers only
 * GET and HEAD of the routes no limit counts (API_ROUTE_UNLIMITED in the
 * api's route table: /healthz, /v2/health/live, /v2/health/ready and
 * /metrics). Nothing on the main port (its connections, bodies, compute
 * or memory budget) is shared with it, so an orchestrator's probes are
 * answered within milliseconds however loaded the main port is
 * (docs/contract.md "Sharing one server": health from capacity nothing
 * else can take). Probes come from the node or the cluster network: the
 * port must stay off the public network.
 */
#ifndef SRV_PROBE_H
#define SRV_PROBE_H

#include "api.h"
#include "gate.h"

/* Connections the probe listener holds at once; past it new ones wait in
 * its backlog. A kubelet and a container health check use one or two;
 * with SRV_PROBE_PER_ADDRESS, filling them takes 128 addresses, and each
 * holds a connection for at most SRV_PROBE_HEAD_TIMEOUT_S without a
 * complete head (16 KiB each at most). */
#define SRV_PROBE_CONNECTIONS 512
/* Connections one address may hold on it (a node's kubelet, a Prometheus):
 * a further one is refused at accept. */
#define SRV_PROBE_PER_ADDRESS 4
/* Seconds a probe's head has to arrive, from accept or from the answer
 * before on a kept-alive connection (then within the idle timeout as
 * well): a probe sends its head at once, and a head trickled to hold a
 * connection is cut (408) and closed. The listener's connections are
 * watched as the main port's are (conn_watch.h): past seven eighths of
 * them open, those waiting on their client are let go, the address that
 * holds the most first. */
#define SRV_PROBE_HEAD_TIMEOUT_S 1
/* Requests one address may send a second, in bursts of
 * SRV_PROBE_BURST; past them, 429 with Retry-After: 1. A kubelet probes
 * about once a second, Prometheus every 15 s. */
#define SRV_PROBE_RATE 10
#define SRV_PROBE_BURST 20
/* Seconds an idle probe connection is kept open. */
#define SRV_PROBE_TIMEOUT_S 5

typedef struct srv_probe srv_probe;

/* Listen on bind:port (port > 0) and answer probes until srv_probe_stop,
 * on one thread of its own. Each probe is answered by api_handle exactly
 * as the main port answers it (same bodies), with nosniff, no-store and an
 * X-Request-Id; /metrics keeps the main port's token rule, so gate (NULL:
 * no token anywhere) is asked about it and must outlive the listener;
 * limits is copied. Requests are counted in the metrics (metrics.h) like
 * the main port's, under the same labels, and are not written to the
 * access log, whose writes a busy main port could hold up. Any other path
 * → 404, another method → 405 with Allow, a body → 413 unread (the
 * connection then closes): problem+json. Returns NULL, after logging why
 * (the address cannot be parsed or bound, memory runs out). */
srv_probe *srv_probe_start(const char *bind, unsigned port,
                           const api_limits *limits, srv_gate *gate);

/* The TCP port the probe listener is bound to. */
unsigned srv_probe_port(const srv_probe *p);

/* Close the probe listener and its connections, join its thread and free
 * p. Called last when stopping, so that readiness keeps being answered
 * (503 while draining) until the main port is gone. NULL is ignored. */
void srv_probe_stop(srv_probe *p);

#endif /* SRV_PROBE_H */
