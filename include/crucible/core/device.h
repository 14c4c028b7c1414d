// Where a tensor's storage lives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace crucible {

// Meta: a tensor with a shape, strides and a dtype but no data (PyTorch's meta device): what the
// meta layer returns for outputs it describes without computing them.
enum class DeviceType : uint8_t { CPU, CUDA, Meta };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
  static Device meta() { return {DeviceType::Meta, 0}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device&) const = default;
  std::string str() const;  // "cpu", "cuda:0"
};

// Accepts "cpu", "cuda", "cuda:1", "meta", "torch.device('cpu')". Throws Input error otherwise.
Device parse_device(std::string_view s);

enum class Layout : uint8_t { Strided, SparseCoo };
enum class MemoryFormat : uint8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

}  // namespace crucible
