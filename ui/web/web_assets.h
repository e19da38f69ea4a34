#pragma once

#include <optional>
#include <string_view>

namespace nk::ui {

// One file of the page 'nodekeeper ui' serves.
struct WebAsset {
  std::string_view content_type;
  std::string_view body;
};

// The page's files, compiled into the binary (embed_assets.py): "/" is not
// one of them; the server maps it to "/index.html". nullopt for any other
// URL, so a request can never name a file on disk.
std::optional<WebAsset> findWebAsset(std::string_view url);

}  // namespace nk::ui
