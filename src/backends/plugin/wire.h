// The byte format of the messages between a trusted worker and its candidate process: plain
// little-endian integers, length-prefixed strings and arrays. Everything a candidate process
// sends is untrusted: WireReader checks every length against what is left and against the
// caller's bounds, and throws WireError on anything malformed.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace crucible {

struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class WireWriter {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* p = reinterpret_cast<const char*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof v);
  }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  void bytes(const void* p, size_t n) {
    put<uint64_t>(n);
    const char* c = static_cast<const char*>(p);
    buf_.insert(buf_.end(), c, c + n);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    put<uint32_t>(static_cast<uint32_t>(v.size()));
    for (const T& x : v) put<T>(x);
  }
  const std::string& data() const { return buf_; }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class WireReader {
 public:
  explicit WireReader(const std::string& s) : p_(s.data()), end_(s.data() + s.size()) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  // A count, at most `max`.
  uint32_t count(uint32_t max, const char* what) {
    uint32_t n = get<uint32_t>();
    if (n > max)
      throw WireError(std::string(what) + ": count " + std::to_string(n) + " over " +
                      std::to_string(max));
    return n;
  }
  std::string str(uint32_t max, const char* what) {
    uint32_t n = count(max, what);
    need(n);
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  // A byte block of at most `max` bytes; returns where it starts in the message.
  const char* bytes(uint64_t max, uint64_t* n, const char* what) {
    *n = get<uint64_t>();
    if (*n > max) throw WireError(std::string(what) + ": too many bytes");
    need(*n);
    const char* at = p_;
    p_ += *n;
    return at;
  }
  template <class T>
  std::vector<T> array(uint32_t max, const char* what) {
    uint32_t n = count(max, what);
    std::vector<T> v(n);
    for (T& x : v) x = get<T>();
    return v;
  }
  bool done() const { return p_ == end_; }
  void expect_done() const {
    if (!done()) throw WireError("trailing bytes after the message");
  }

 private:
  void need(uint64_t n) const {
    if (n > static_cast<uint64_t>(end_ - p_)) throw WireError("the message is cut short");
  }
  const char* p_;
  const char* end_;
};

}  // namespace crucible
