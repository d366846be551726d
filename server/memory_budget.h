/*
 * memory_budget.h — the size of the server-wide memory budget (the budget
 * itself is the api's: api_budget_set in api.h).
 *
 * In a container the kernel kills the whole process when it passes the
 * cgroup's memory limit, so by default the budget is three quarters of
 * that limit: the rest is for what no request reserves (the code, BLAS's
 * buffers, libmicrohttpd's connection buffers, the allocator's slack).
 * Outside a cgroup limit it is half of the machine's RAM.
 */
#ifndef SRV_MEMORY_BUDGET_H
#define SRV_MEMORY_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/* The default budget in bytes; *source says where it came from
 * ("3/4 of the cgroup memory limit", "half of RAM"). */
uint64_t srv_memory_budget_default(const char **source);

/* The budget --memory-budget asks for: option itself, or the default
 * when it is SRV_MEMORY_BUDGET_AUTO (options.h); *source says where it
 * came from ("--memory-budget" or the default's). The daemon and the
 * offline commands (offline.h) both size theirs so. */
uint64_t srv_memory_budget(uint64_t option, const char **source);

/* The cgroup memory limit of this process in bytes (v2 memory.max, else
 * v1 memory.limit_in_bytes), or 0 when there is none. */
uint64_t srv_cgroup_memory_limit(void);

#endif /* SRV_MEMORY_BUDGET_H */
