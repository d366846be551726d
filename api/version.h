/*
 * version.h — attnd's release version, the one place it is written:
 * GET /version, attnd_build_info on GET /metrics, the man page and the
 * pkg-config file (the Makefile reads it from here). A build may override
 * it with -DATTND_VERSION='"x.y.z"'.
 */
#ifndef API_VERSION_H
#define API_VERSION_H

#ifndef ATTND_VERSION
#define ATTND_VERSION "0.1.0"
#endif

#endif /* API_VERSION_H */
