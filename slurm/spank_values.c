#include "spank_values.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENERGY_KEY "nodekeeper_energy_j:"

static void set_why(char *why, size_t why_len, const char *text) {
  if (why && why_len) snprintf(why, why_len, "%s", text);
}

int nk_spank_parse_budget(const char *text, uint64_t *milliwatts, char *why, size_t why_len) {
  if (!text || !*text) {
    set_why(why, why_len, "is empty: give watts, e.g. 40W");
    return -1;
  }
  if (isspace((unsigned char)text[0])) {
    set_why(why, why_len, "is not a power: give watts, e.g. 40W");
    return -1;
  }
  errno = 0;
  char *end = NULL;
  double value = strtod(text, &end);
  if (end == text || errno != 0 || !isfinite(value)) {
    set_why(why, why_len, "is not a power: give watts, e.g. 40W or 40");
    return -1;
  }
  double scale = 1000.0;
  if (strcmp(end, "W") == 0 || strcmp(end, "w") == 0 || *end == '\0') scale = 1000.0;
  else if (strcmp(end, "mW") == 0) scale = 1.0;
  else {
    set_why(why, why_len, "has an unknown unit: give watts, e.g. 40W, 40 or 40000mW");
    return -1;
  }
  double mw = round(value * scale);
  if (value <= 0 || mw < 1) {
    set_why(why, why_len, "must be positive");
    return -1;
  }
  if (mw > NK_SPANK_MAX_BUDGET_W * 1000.0) {
    set_why(why, why_len, "is out of range (at most 100000 W)");
    return -1;
  }
  *milliwatts = (uint64_t)mw;
  return 0;
}

int nk_spank_valid_policy(const char *name) {
  if (!name) return 0;
  size_t n = strlen(name);
  if (n == 0 || n > 64) return 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)name[i];
    if (!isalnum(c) && c != '_' && c != '.' && c != '-') return 0;
  }
  return 1;
}

int nk_spank_valid_tasks(const char *mode) {
  return mode && (strcmp(mode, "lossless") == 0 || strcmp(mode, "lossy") == 0);
}

int nk_spank_admin_comment(const char *existing, const char *node, double energy_j, char *out, size_t out_len) {
  if (!out || out_len == 0 || !node || !*node || strpbrk(node, ",= ") || strlen(node) > 255) return -1;
  char key[300];
  snprintf(key, sizeof key, ENERGY_KEY "%s=", node);
  const size_t key_len = strlen(key);
  size_t used = 0;
  out[0] = '\0';
  const char *item = existing ? existing : "";
  while (*item) {
    const char *comma = strchr(item, ',');
    size_t len = comma ? (size_t)(comma - item) : strlen(item);
    int ours = len >= key_len && strncmp(item, key, key_len) == 0;
    if (len > 0 && !ours) {
      if (used + len + 2 > out_len) return -1;
      if (used) out[used++] = ',';
      memcpy(out + used, item, len);
      used += len;
      out[used] = '\0';
    }
    item += len;
    if (*item == ',') ++item;
  }
  if (!(energy_j >= 0) || !isfinite(energy_j)) energy_j = 0;
  int written = snprintf(out + used, out_len - used, "%s%s%.1f", used ? "," : "", key, energy_j);
  if (written < 0 || (size_t)written >= out_len - used) return -1;
  return 0;
}

double nk_spank_energy_from_json(const char *json) {
  if (!json) return -1;
  const char *key = strstr(json, "\"energy_j\":");
  if (!key) return -1;
  key += strlen("\"energy_j\":");
  while (*key == ' ') ++key;
  char *end = NULL;
  double value = strtod(key, &end);
  if (end == key || !isfinite(value)) return -1;
  return value;
}
