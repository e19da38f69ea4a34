#!/usr/bin/env python3
"""Writes the page's files into a C++ source as byte arrays.

'nodekeeper ui' serves only what is compiled into it: no file on disk is
ever opened for a request, so no path a request names can reach outside
the page's own assets.

  embed_assets.py OUT.cc URL=FILE [URL=FILE ...]
"""
import mimetypes
import sys

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


def content_type(url):
    for suffix, kind in TYPES.items():
        if url.endswith(suffix):
            return kind
    return mimetypes.guess_type(url)[0] or "application/octet-stream"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    entries = []
    for pair in sys.argv[2:]:
        url, _, path = pair.partition("=")
        if not url.startswith("/") or not path:
            sys.exit(f"embed_assets.py: bad URL=FILE pair {pair!r}")
        with open(path, "rb") as f:
            entries.append((url, content_type(url), f.read()))
    lines = ['#include "web_assets.h"', "", "#include <array>", "", "namespace nk::ui {", "namespace {", ""]
    for index, (_, _, body) in enumerate(entries):
        lines.append(f"constexpr unsigned char kBody{index}[] = {{")
        for start in range(0, len(body), 24):
            lines.append("    " + ",".join(str(b) for b in body[start:start + 24]) + ",")
        lines.append("    0};")
    lines.append("")
    lines.append("struct Entry {")
    lines.append("  std::string_view url;")
    lines.append("  std::string_view content_type;")
    lines.append("  const unsigned char* body;")
    lines.append("  size_t size;")
    lines.append("};")
    lines.append(f"constexpr std::array<Entry, {len(entries)}> kEntries = {{{{")
    for index, (url, kind, body) in enumerate(entries):
        lines.append(f'    {{"{url}", "{kind}", kBody{index}, {len(body)}}},')
    lines.append("}};")
    lines.append("")
    lines.append("}  // namespace")
    lines.append("")
    lines.append("std::optional<WebAsset> findWebAsset(std::string_view url) {")
    lines.append("  for (const Entry& entry : kEntries)")
    lines.append("    if (entry.url == url)")
    lines.append("      return WebAsset{entry.content_type,")
    lines.append("                      std::string_view(reinterpret_cast<const char*>(entry.body), entry.size)};")
    lines.append("  return std::nullopt;")
    lines.append("}")
    lines.append("")
    lines.append("}  // namespace nk::ui")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
