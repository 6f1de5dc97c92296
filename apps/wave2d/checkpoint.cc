// SPDX-License-Identifier: LGPL-2.1-or-later
#include "checkpoint.h"

#include <deal.II/base/exceptions.h>

#include <cstring>

#include "../common/app_utilities.h"

namespace Wave2D
{
  namespace
  {
    /// The first and last 8 bytes of a checkpoint: a file that ends
    /// without them was cut short.
    constexpr char magic[9] = "WAVE2DC2";
  } // namespace



  std::uint64_t
  fnv1a(std::uint64_t hash, const void *data, const std::size_t size)
  {
    const unsigned char *bytes = static_cast<const unsigned char *>(data);
    for (std::size_t i = 0; i < size; ++i)
      hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
  }



  std::string
  serialize_checkpoint(const Checkpoint &c)
  {
    std::string data;
    const auto  put = [&data](const void *bytes, const std::size_t size) {
      data.append(static_cast<const char *>(bytes), size);
    };
    const std::uint64_t sizes[3] = {c.u_previous.size(),
                                    c.history.size(),
                                    c.snapshots.size()};
    put(magic, 8);
    put(&c.fingerprint, 8);
    put(&c.precision, sizeof(c.precision));
    put(&c.step, sizeof(c.step));
    put(sizes, sizeof(sizes));
    put(c.u_previous.data(), c.u_previous.size() * sizeof(double));
    put(c.u_current.data(), c.u_current.size() * sizeof(double));
    put(c.history.data(), c.history.size() * sizeof(double));
    for (const auto &[t, file] : c.snapshots)
      {
        const std::uint64_t length = file.size();
        put(&t, sizeof(double));
        put(&length, sizeof(length));
        put(file.data(), length);
      }
    const std::uint64_t checksum = fnv1a(fnv1a_basis, data.data(), data.size());
    put(&checksum, sizeof(checksum));
    put(magic, 8);
    return data;
  }



  Checkpoint
  parse_checkpoint(const std::string &data, const std::string &name)
  {
    using dealii::ExcMessage;
    const auto refuse = [&name](const std::string &what) {
      return ExcMessage(name + " cannot be continued: " + what + ".");
    };
    AssertThrow(data.size() >= 8 && (data.compare(0, 8, magic) == 0 ||
                                     data.compare(0, 8, "WAVE2DC1") == 0),
                refuse("it is not a wave2d checkpoint"));
    AssertThrow(data.compare(0, 8, "WAVE2DC1") != 0,
                refuse("it was written by an older wave2d, whose checkpoints "
                       "carry no checksum; run again from the start"));
    const std::size_t trailer = sizeof(std::uint64_t) + 8;
    AssertThrow(data.size() >= 8 + trailer &&
                  data.compare(data.size() - 8, 8, magic) == 0,
                refuse("it is cut short (" + std::to_string(data.size()) +
                       " bytes, without the end marker)"));
    const std::size_t body = data.size() - trailer;
    std::uint64_t     checksum;
    std::memcpy(&checksum, data.data() + body, sizeof(checksum));
    AssertThrow(checksum == fnv1a(fnv1a_basis, data.data(), body),
                refuse("its checksum does not match its contents (the file "
                       "is damaged)"));

    // The contents, every read checked against the length.
    std::size_t position = 8;
    const auto  get      = [&](void *bytes, const std::size_t size) {
      AssertThrow(size <= body - position,
                  refuse("its sizes do not fit its length"));
      std::memcpy(bytes, data.data() + position, size);
      position += size;
    };
    Checkpoint    c;
    std::uint64_t sizes[3];
    get(&c.fingerprint, 8);
    get(&c.precision, sizeof(c.precision));
    get(&c.step, sizeof(c.step));
    get(sizes, sizeof(sizes));
    const auto doubles = [&](std::vector<double> &values,
                             const std::uint64_t  n) {
      AssertThrow(n <= (body - position) / sizeof(double),
                  refuse("its sizes do not fit its length"));
      values.resize(n);
      get(values.data(), n * sizeof(double));
      AssertThrow(AppUtilities::first_non_finite(values) == values.size(),
                  refuse("it holds a state or record that is not a finite "
                         "number"));
    };
    doubles(c.u_previous, sizes[0]);
    doubles(c.u_current, sizes[0]);
    doubles(c.history, sizes[1]);
    for (std::uint64_t i = 0; i < sizes[2]; ++i)
      {
        double        t;
        std::uint64_t length;
        get(&t, sizeof(t));
        get(&length, sizeof(length));
        AssertThrow(length <= body - position,
                    refuse("its sizes do not fit its length"));
        c.snapshots.emplace_back(t, data.substr(position, length));
        position += length;
      }
    AssertThrow(position == body,
                refuse("it holds " + std::to_string(body - position) +
                       " bytes more than its sizes say"));
    return c;
  }
} // namespace Wave2D
