// SPDX-License-Identifier: LGPL-2.1-or-later
#include "snapshot_writer.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/utilities.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>

#include "app_utilities.h"
#include <zlib.h>

namespace AppUtilities
{
  namespace
  {
    const char base64_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    // Standard base64 with '=' padding and no line breaks, as VTK reads it.
    void
    append_base64(const unsigned char *data,
                  const std::size_t    n,
                  std::string         &out)
    {
      std::size_t i = 0;
      for (; i + 2 < n; i += 3)
        {
          const std::uint32_t v = (std::uint32_t(data[i]) << 16) |
                                  (std::uint32_t(data[i + 1]) << 8) |
                                  data[i + 2];
          out += base64_alphabet[(v >> 18) & 63];
          out += base64_alphabet[(v >> 12) & 63];
          out += base64_alphabet[(v >> 6) & 63];
          out += base64_alphabet[v & 63];
        }
      if (i < n)
        {
          std::uint32_t v = std::uint32_t(data[i]) << 16;
          if (i + 1 < n)
            v |= std::uint32_t(data[i + 1]) << 8;
          out += base64_alphabet[(v >> 18) & 63];
          out += base64_alphabet[(v >> 12) & 63];
          out += i + 1 < n ? base64_alphabet[(v >> 6) & 63] : '=';
          out += '=';
        }
    }

    std::vector<unsigned char>
    decode_base64(const std::string &text)
    {
      std::vector<unsigned char> out;
      std::uint32_t              v    = 0;
      int                        bits = 0;
      for (const char c : text)
        {
          if (c == '=')
            break;
          const char *p = std::strchr(base64_alphabet, c);
          AssertThrow(c != '\0' && p != nullptr,
                      dealii::ExcMessage(
                        "SnapshotWriter: DataOut wrote a character that is "
                        "not base64 in a binary DataArray."));
          v = (v << 6) | std::uint32_t(p - base64_alphabet);
          bits += 6;
          if (bits >= 8)
            {
              bits -= 8;
              out.push_back((v >> bits) & 0xff);
            }
        }
      return out;
    }

    int
    zlib_level(const dealii::DataOutBase::VtkFlags::ZlibCompressionLevel level)
    {
      using Flags = dealii::DataOutBase::VtkFlags;
      switch (level)
        {
          case Flags::no_compression:
            return Z_NO_COMPRESSION;
          case Flags::best_speed:
            return Z_BEST_SPEED;
          case Flags::best_compression:
            return Z_BEST_COMPRESSION;
          default:
            return Z_DEFAULT_COMPRESSION;
        }
    }

    // One zlib block with VTK's header (number of blocks, block size, last
    // block size, compressed size), header and data encoded separately.
    void
    append_compressed_block(const std::vector<float> &values,
                            const int                 level,
                            std::string              &out)
    {
      if (values.empty())
        return;
      const uLong                bytes  = values.size() * sizeof(float);
      uLongf                     length = compressBound(bytes);
      std::vector<unsigned char> compressed(length);
      const int                  status =
        compress2(compressed.data(),
                  &length,
                  reinterpret_cast<const Bytef *>(values.data()),
                  bytes,
                  level);
      AssertThrow(status == Z_OK,
                  dealii::ExcMessage("SnapshotWriter: zlib could not compress "
                                     "a data array (zlib error " +
                                     std::to_string(status) + ")."));
      const std::uint32_t header[4] = {1,
                                       std::uint32_t(bytes),
                                       std::uint32_t(bytes),
                                       std::uint32_t(length)};
      append_base64(reinterpret_cast<const unsigned char *>(header),
                    sizeof(header),
                    out);
      append_base64(compressed.data(), length, out);
    }

    std::vector<float>
    decode_compressed_block(const std::string &line, const std::string &name)
    {
      const auto refuse = [&](const std::string &why) {
        return dealii::ExcMessage("SnapshotWriter: the DataArray " + name +
                                  " that DataOut wrote is not in the format "
                                  "this writer reproduces (" +
                                  why + ").");
      };
      AssertThrow(line.size() >= 24, refuse("no compression header"));
      const std::vector<unsigned char> head = decode_base64(line.substr(0, 24));
      AssertThrow(head.size() == 16, refuse("no compression header"));
      std::uint32_t header[4];
      std::memcpy(header, head.data(), sizeof(header));
      AssertThrow(header[0] == 1 && header[1] == header[2] &&
                    header[1] % sizeof(float) == 0,
                  refuse("not one zlib block of floats"));
      const std::vector<unsigned char> compressed =
        decode_base64(line.substr(24));
      AssertThrow(compressed.size() == header[3],
                  refuse("compressed size differs from its header"));
      std::vector<float> values(header[1] / sizeof(float));
      uLongf             length = header[1];
      const int status = uncompress(reinterpret_cast<Bytef *>(values.data()),
                                    &length,
                                    compressed.data(),
                                    compressed.size());
      AssertThrow(status == Z_OK && length == header[1],
                  refuse("zlib could not expand it"));
      return values;
    }

    // One line of @p text from @p position (without its newline), advancing
    // @p position past the newline.
    std::string
    next_line(const std::string &text, std::size_t &position)
    {
      const std::size_t end = text.find('\n', position);
      AssertThrow(end != std::string::npos,
                  dealii::ExcMessage("SnapshotWriter: the VTU that DataOut "
                                     "wrote ends in the middle of a line."));
      std::string line = text.substr(position, end - position);
      position         = end + 1;
      return line;
    }

    const std::string date_line = "#This file was generated by the deal.II "
                                  "library";
  } // namespace



  template <int dim>
  SnapshotWriter<dim>::SnapshotWriter(
    const std::vector<std::size_t>      &input_sizes,
    const Configure                     &configure,
    const dealii::DataOutBase::VtkFlags &flags)
    : input_sizes(input_sizes)
    , zlib_level(AppUtilities::zlib_level(flags.compression_level))
  {
    worker =
      std::thread([this, configure = Configure(configure), flags]() mutable {
        std::exception_ptr failure;
        try
          {
            prepare(configure, flags);
          }
        catch (...)
          {
            failure = std::current_exception();
          }
        // What the configuration holds (a DoFHandler, say) is not needed any
        // more.
        configure = nullptr;
        {
          std::unique_lock<std::mutex> lock(mutex);
          prepared      = true;
          prepare_error = failure;
          error         = failure;
        }
        changed.notify_all();
        run();
      });
  }



  template <int dim>
  void
  SnapshotWriter<dim>::prepare(const Configure                     &configure,
                               const dealii::DataOutBase::VtkFlags &flags)
  {
    // Entry i of the concatenated inputs is probed as i % 2^24 + 1, which
    // float holds exactly, and on meshes with more entries also as
    // i / 2^24 + 1 (a second probe); 0 marks the padding of 2d vector
    // fields.
    constexpr std::uint64_t split     = std::uint64_t(1) << 24;
    std::uint64_t           n_entries = 0;
    for (const std::size_t size : input_sizes)
      n_entries += size;
    const bool two_parts = n_entries >= split;
    AssertThrow(n_entries < split * 256,
                dealii::ExcMessage("SnapshotWriter: the snapshot has " +
                                   std::to_string(n_entries) +
                                   " values, more than it can index."));
    // A last probe of -0 everywhere tells the values DataOut copies (cell
    // data keep the sign of a zero) from those it sums from +0 (nodal
    // values: shape functions times values).
    enum class Probe
    {
      low,
      high,
      negative_zero
    };
    const auto probe = [&](const Probe kind) {
      std::vector<dealii::Vector<double>> inputs;
      std::uint64_t                       offset = 0;
      for (const std::size_t size : input_sizes)
        {
          inputs.emplace_back(size);
          for (std::size_t i = 0; i < size; ++i)
            inputs.back()[i] =
              kind == Probe::negative_zero ?
                -0.0 :
                double((kind == Probe::high ? (offset + i) / split :
                                              (offset + i) % split) +
                       1);
          offset += size;
        }
      dealii::DataOut<dim> data_out;
      configure(data_out, inputs);
      // Only the first probe's text is kept; the others are read back,
      // which zlib's level 0 makes cheaper to write.
      dealii::DataOutBase::VtkFlags probe_flags = flags;
      if (kind != Probe::low)
        probe_flags.compression_level =
          dealii::DataOutBase::VtkFlags::no_compression;
      data_out.set_flags(probe_flags);
      std::ostringstream out;
      data_out.write_vtu(out);
      return out.str();
    };
    const std::string low  = probe(Probe::low),
                      high = two_parts ? probe(Probe::high) : low,
                      zero = probe(Probe::negative_zero);

    // Where the point data of a probe start: after the <PointData line.
    const auto point_data = [](const std::string &text) {
      const std::size_t start = text.find("<PointData");
      AssertThrow(start != std::string::npos,
                  dealii::ExcMessage("SnapshotWriter: DataOut wrote no point "
                                     "data for the snapshot's inputs."));
      const std::size_t end = text.find('\n', start);
      AssertThrow(end != std::string::npos,
                  dealii::ExcMessage("SnapshotWriter: the VTU that DataOut "
                                     "wrote ends after <PointData."));
      return end + 1;
    };

    // The header, with the date line split where its date starts.
    std::size_t       position = point_data(low);
    const std::string header   = low.substr(0, position);
    const std::size_t date     = header.find(date_line);
    const std::size_t date_stop =
      date == std::string::npos ? std::string::npos : header.find('\n', date);
    header_has_date = date_stop != std::string::npos &&
                      header.compare(date + date_line.size(), 4, " on ") == 0;
    if (header_has_date)
      {
        header_before_date = header.substr(0, date + date_line.size());
        header_after_date  = header.substr(date_stop);
      }
    else
      header_before_date = header;

    // The arrays: an opening line, the data, a closing line each, in the
    // same order in every probe.
    std::size_t position_high = point_data(high),
                position_zero = point_data(zero);
    while (true)
      {
        const std::size_t start   = position;
        const std::string opening = next_line(low, position);
        if (opening.find("</PointData>") != std::string::npos)
          {
            trailer = low.substr(start);
            break;
          }
        const std::string opening_high = next_line(high, position_high);
        AssertThrow(opening == opening_high &&
                      opening.find("format=\"binary\"") != std::string::npos,
                    dealii::ExcMessage("SnapshotWriter: DataOut wrote the "
                                       "DataArray '" +
                                       opening +
                                       "' in a format this writer does not "
                                       "reproduce."));
        const std::string data      = next_line(low, position);
        const std::string data_high = next_line(high, position_high);
        next_line(zero, position_zero);
        const std::string data_zero = next_line(zero, position_zero);
        next_line(zero, position_zero);
        Array array;
        array.opening = opening + '\n';
        array.closing = next_line(low, position) + '\n';
        next_line(high, position_high);

        const std::vector<float> values =
          decode_compressed_block(data, opening);
        const std::vector<float> values_high =
          decode_compressed_block(data_high, opening);
        const std::vector<float> values_zero =
          decode_compressed_block(data_zero, opening);
        AssertThrow(values.size() == values_high.size() &&
                      values.size() == values_zero.size(),
                    dealii::ExcMessage("SnapshotWriter: the two probes of " +
                                       opening + " differ in size."));
        std::string reencoded;
        append_compressed_block(values, zlib_level, reencoded);
        AssertThrow(reencoded == data,
                    dealii::ExcMessage(
                      "SnapshotWriter: the DataArray " + opening +
                      " re-encoded differs from the one DataOut wrote: "
                      "this writer does not reproduce the format of this "
                      "deal.II and these flags."));

        array.sources.resize(values.size());
        for (std::size_t k = 0; k < values.size(); ++k)
          {
            const float lo = values[k], hi = two_parts ? values_high[k] :
                                             lo == 0   ? 0.f :
                                                         1.f;
            if (lo == 0 && hi == 0)
              {
                array.sources[k] = {no_input, 0, false};
                continue;
              }
            AssertThrow(lo >= 1 && hi >= 1 && lo <= split && hi <= split &&
                          lo == std::floor(lo) && hi == std::floor(hi),
                        dealii::ExcMessage(
                          "SnapshotWriter: value " + std::to_string(k) +
                          " of the DataArray " + opening +
                          " is not one input entry (DataOut interpolates "
                          "there, e.g. between the support points of the "
                          "element): this output needs DataOut itself."));
            std::uint64_t entry =
              (std::uint64_t(hi) - 1) * split + (std::uint64_t(lo) - 1);
            std::uint32_t input = 0;
            while (entry >= input_sizes[input])
              entry -= input_sizes[input++];
            array.sources[k] = {input,
                                std::uint32_t(entry),
                                !std::signbit(values_zero[k])};
          }
        arrays.push_back(std::move(array));
      }
  }



  template <int dim>
  SnapshotWriter<dim>::~SnapshotWriter()
  {
    {
      std::unique_lock<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    worker.join();
    if (error && !error_thrown)
      try
        {
          std::rethrow_exception(error);
        }
      catch (const std::exception &e)
        {
          std::cerr << e.what() << std::endl;
        }
      catch (...)
        {
          std::cerr << "SnapshotWriter: a snapshot failed." << std::endl;
        }
  }



  template <int dim>
  std::string
  SnapshotWriter<dim>::vtu(const std::vector<std::vector<double>> &inputs) const
  {
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&]() {
        return prepared;
      });
      if (prepare_error)
        std::rethrow_exception(prepare_error);
    }
    std::string text = header_before_date;
    if (header_has_date)
      text += " on " + dealii::Utilities::System::get_time() + " at " +
              dealii::Utilities::System::get_date() + header_after_date;
    std::vector<float> values;
    for (const Array &array : arrays)
      {
        text += array.opening;
        values.resize(array.sources.size());
        for (std::size_t k = 0; k < values.size(); ++k)
          {
            const Source &s = array.sources[k];
            values[k]       = s.input == no_input ?
                                0.f :
                                float(s.from_sum ? inputs[s.input][s.index] + 0.0 :
                                                   inputs[s.input][s.index]);
          }
        append_compressed_block(values, zlib_level, text);
        text += '\n';
        text += array.closing;
      }
    text += trailer;
    return text;
  }



  template <int dim>
  void
  SnapshotWriter<dim>::throw_pending_error()
  {
    if (error && !error_thrown)
      {
        error_thrown = true;
        std::rethrow_exception(error);
      }
  }



  template <int dim>
  void
  SnapshotWriter<dim>::check_sizes(
    const std::string                      &path,
    const std::vector<std::vector<double>> &inputs) const
  {
    AssertThrow(inputs.size() == input_sizes.size(),
                dealii::ExcMessage("SnapshotWriter: " + path + " was given " +
                                   std::to_string(inputs.size()) +
                                   " vectors, the series has " +
                                   std::to_string(input_sizes.size()) + "."));
    for (std::size_t i = 0; i < inputs.size(); ++i)
      AssertThrow(inputs[i].size() == input_sizes[i],
                  dealii::ExcMessage(
                    "SnapshotWriter: vector " + std::to_string(i) + " of " +
                    path + " has " + std::to_string(inputs[i].size()) +
                    " entries, the series " + std::to_string(input_sizes[i]) +
                    "."));
  }



  template <int dim>
  void
  SnapshotWriter<dim>::write(const std::string               &path,
                             std::vector<std::vector<double>> inputs,
                             std::function<void()>            after,
                             Complete                         complete)
  {
    if (!complete)
      check_sizes(path, inputs);
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&]() {
      return error || queue.size() + busy < 2;
    });
    throw_pending_error();
    queue.push_back(
      {path, std::move(inputs), std::move(after), std::move(complete)});
    lock.unlock();
    changed.notify_all();
  }



  template <int dim>
  void
  SnapshotWriter<dim>::flush()
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&]() {
      return prepared && queue.empty() && !busy;
    });
    throw_pending_error();
  }



  template <int dim>
  void
  SnapshotWriter<dim>::run()
  {
    std::unique_lock<std::mutex> lock(mutex);
    while (true)
      {
        changed.wait(lock, [&]() {
          return stopping || !queue.empty();
        });
        if (queue.empty())
          return;
        Job job = std::move(queue.front());
        queue.pop_front();
        // After an error the series stops: a later file would suggest that
        // the ones before it are complete.
        if (error)
          {
            changed.notify_all();
            continue;
          }
        busy = true;
        lock.unlock();
        std::exception_ptr failure;
        try
          {
            if (job.complete)
              {
                job.complete(job.inputs);
                check_sizes(job.path, job.inputs);
              }
            const std::string text = vtu(job.inputs);
            write_file(job.path, [&](std::ostream &out) {
              out.write(text.data(), text.size());
            });
            if (job.after)
              job.after();
          }
        catch (...)
          {
            failure = std::current_exception();
          }
        lock.lock();
        busy = false;
        if (failure && !error)
          error = failure;
        changed.notify_all();
      }
  }



  template class SnapshotWriter<2>;
  template class SnapshotWriter<3>;
} // namespace AppUtilities
