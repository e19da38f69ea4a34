/* What the nodekeeper SPANK plugin parses and composes, apart from Slurm so
 * that unit tests drive it. Plain C: the plugin is C. */
#ifndef NODEKEEPER_SLURM_SPANK_VALUES_H
#define NODEKEEPER_SLURM_SPANK_VALUES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NK_SPANK_MAX_BUDGET_W 100000.0

/* "40W", "40", "40.5W", "40000mW" -> milliwatts. 0 on success; -1 with a
 * reason in `why` (a phrase, e.g. "is not a power") otherwise. */
int nk_spank_parse_budget(const char *text, uint64_t *milliwatts, char *why, size_t why_len);

/* A policy name: 1 to 64 of [A-Za-z0-9_.-]. */
int nk_spank_valid_policy(const char *name);

/* "lossless" or "lossy". */
int nk_spank_valid_tasks(const char *mode);

/* The admin comment with this node's energy for the job: `existing`
 * without an earlier item of this node, then ",nodekeeper_energy_j:NODE=J"
 * (J in joules with one decimal; the items of other nodes stay). 0, or -1
 * when it does not fit in `out` or the node name holds ',' or '='. */
int nk_spank_admin_comment(const char *existing, const char *node, double energy_j, char *out, size_t out_len);

/* The value of "energy_j": in the JSON line `nodekeeper job end --json`
 * prints; -1 when absent. */
double nk_spank_energy_from_json(const char *json);

#ifdef __cplusplus
}
#endif

#endif
