#include "taskgraph/zstd_frames.h"

#include <zstd.h>

namespace nk {

struct ZstdFrames::Contexts {
  struct FreeCompression {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  struct FreeDecompression {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  std::unique_ptr<ZSTD_CCtx, FreeCompression> compression;
  std::unique_ptr<ZSTD_DCtx, FreeDecompression> decompression;
};

ZstdFrames::ZstdFrames() : contexts_(std::make_unique<Contexts>()) {}
ZstdFrames::~ZstdFrames() = default;
ZstdFrames::ZstdFrames(ZstdFrames&&) noexcept = default;
ZstdFrames& ZstdFrames::operator=(ZstdFrames&&) noexcept = default;

void ZstdFrames::compress(std::span<const std::byte> data, std::vector<std::byte>& out, Effort effort) {
  if (!contexts_->compression) contexts_->compression.reset(ZSTD_createCCtx());
  out.resize(ZSTD_compressBound(data.size()));
  size_t n = contexts_->compression
                 ? ZSTD_compressCCtx(contexts_->compression.get(), out.data(), out.size(), data.data(), data.size(),
                                     effort == Effort::kCompact ? 1 : ZSTD_minCLevel())
                 : 0;
  out.resize(ZSTD_isError(n) ? 0 : n);
}

size_t ZstdFrames::contextBytes() const {
  return ZSTD_sizeof_CCtx(contexts_->compression.get()) + ZSTD_sizeof_DCtx(contexts_->decompression.get());
}

std::string ZstdFrames::decompress(std::span<const std::byte> frame, std::vector<std::byte>& out, size_t max_size) {
  out.clear();
  if (ZSTD_findFrameCompressedSize(frame.data(), frame.size()) != frame.size())
    return "payload is not exactly one zstd frame";
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR)
    return "zstd frame does not say its content size";
  if (size > max_size)
    return "zstd frame holds " + std::to_string(size) + " bytes, more than the maximum " + std::to_string(max_size);
  if (!contexts_->decompression) contexts_->decompression.reset(ZSTD_createDCtx());
  if (!contexts_->decompression) return "cannot make a zstd context";
  out.resize(size);
  size_t n = ZSTD_decompressDCtx(contexts_->decompression.get(), out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) {
    out.clear();
    return std::string("zstd: ") + ZSTD_getErrorName(n);
  }
  if (n != size) {
    out.clear();
    return "zstd frame holds " + std::to_string(n) + " bytes, not the " + std::to_string(size) + " it says";
  }
  return {};
}

}  // namespace nk
