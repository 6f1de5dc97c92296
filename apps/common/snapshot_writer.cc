// SPDX-License-Identifier: LGPL-2.1-or-later
#include "snapshot_writer.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/multithread_info.h>
#include <deal.II/base/parallel.h>
#include <deal.II/base/utilities.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include "app_utilities.h"
#include <zlib.h>

namespace AppUtilities
{
  namespace
  {
    const char base64_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    // The length of the base64 text of @p n bytes.
    std::size_t
    base64_length(const std::size_t n)
    {
      return 4 * ((n + 2) / 3);
    }

    // Standard base64 with '=' padding and no line breaks, as VTK reads it,
    // into the base64_length(n) characters at @p out.
    void
    encode_base64(const unsigned char *data, const std::size_t n, char *out)
    {
      std::size_t i = 0;
      for (; i + 2 < n; i += 3, out += 4)
        {
          const std::uint32_t v = (std::uint32_t(data[i]) << 16) |
                                  (std::uint32_t(data[i + 1]) << 8) |
                                  data[i + 2];
          out[0] = base64_alphabet[(v >> 18) & 63];
          out[1] = base64_alphabet[(v >> 12) & 63];
          out[2] = base64_alphabet[(v >> 6) & 63];
          out[3] = base64_alphabet[v & 63];
        }
      if (i < n)
        {
          std::uint32_t v = std::uint32_t(data[i]) << 16;
          if (i + 1 < n)
            v |= std::uint32_t(data[i + 1]) << 8;
          out[0] = base64_alphabet[(v >> 18) & 63];
          out[1] = base64_alphabet[(v >> 12) & 63];
          out[2] = i + 1 < n ? base64_alphabet[(v >> 6) & 63] : '=';
          out[3] = '=';
        }
    }

    std::vector<unsigned char>
    decode_base64(const char *text, const std::size_t n)
    {
      static const std::array<signed char, 256> digit = []() {
        std::array<signed char, 256> d;
        d.fill(-1);
        for (int k = 0; k < 64; ++k)
          d[static_cast<unsigned char>(base64_alphabet[k])] = k;
        return d;
      }();
      std::vector<unsigned char> out;
      out.reserve(3 * (n / 4) + 3);
      std::uint32_t v    = 0;
      int           bits = 0;
      for (std::size_t i = 0; i < n && text[i] != '='; ++i)
        {
          const int d = digit[static_cast<unsigned char>(text[i])];
          AssertThrow(d >= 0,
                      dealii::ExcMessage(
                        "VTU reader: a binary DataArray holds the character '" +
                        std::string(1, text[i]) + "', which is not base64."));
          v = (v << 6) | std::uint32_t(d);
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

    // Arrays up to this many bytes are one compress2() call, as DataOut
    // compresses them (same bytes); larger ones are deflated in blocks of
    // this size on several threads and joined into one zlib stream. Large
    // enough that a block's deflate outweighs setting its stream up, small
    // enough that the arrays of a modest mesh still spread over the cores.
    constexpr std::size_t block_bytes = std::size_t(1) << 16;

    // Base64 is encoded in pieces of this many input bytes (a multiple of 3,
    // so that the pieces' texts join into the text of the whole).
    constexpr std::size_t base64_piece = 3 * (std::size_t(1) << 15);

    // The two bytes that start the zlib stream compress2() writes at
    // @p level (RFC 1950: deflate, a 32 KiB window, the level's class).
    std::array<unsigned char, 2>
    zlib_header(const int level)
    {
      const int     effective   = level == Z_DEFAULT_COMPRESSION ? 6 : level;
      const int     level_class = effective < 2  ? 0 :
                                  effective < 6  ? 1 :
                                  effective == 6 ? 2 :
                                                   3;
      std::uint32_t header      = (Z_DEFLATED + ((MAX_WBITS - 8) << 4)) << 8;
      header |= level_class << 6;
      header += 31 - header % 31;
      return {{static_cast<unsigned char>(header >> 8),
               static_cast<unsigned char>(header & 0xff)}};
    }

    // Raw deflate of one block of a longer stream: a block that is not the
    // last ends with a sync flush (byte-aligned, no end-of-stream mark), so
    // that the blocks concatenated are one deflate stream. Returns zlib's
    // status.
    int
    deflate_block(const unsigned char        *data,
                  const std::size_t           n,
                  const int                   level,
                  const bool                  last,
                  std::vector<unsigned char> &out)
    {
      z_stream stream{};
      int      status = deflateInit2(&stream,
                                level,
                                Z_DEFLATED,
                                -MAX_WBITS,
                                8,
                                Z_DEFAULT_STRATEGY);
      if (status != Z_OK)
        return status;
      // The bound of a finished stream, and room for the flush's empty
      // stored block.
      out.resize(deflateBound(&stream, n) + 16);
      stream.next_in   = const_cast<Bytef *>(data);
      stream.avail_in  = n;
      stream.next_out  = out.data();
      stream.avail_out = out.size();
      status           = deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH);
      const bool done =
        last ? status == Z_STREAM_END :
               status == Z_OK && stream.avail_in == 0 && stream.avail_out > 0;
      out.resize(stream.total_out);
      deflateEnd(&stream);
      return done ? Z_OK : status == Z_OK ? Z_BUF_ERROR : status;
    }

    using Fill = std::function<
      void(std::size_t, std::size_t, std::size_t, unsigned char *)>;

    /**
     * One zlib stream of each array's bytes: @p fill writes the bytes
     * [begin, end) of array a to its last argument. Arrays of at most
     * @p block bytes are compressed by compress2() (DataOut's bytes);
     * larger ones in blocks, all on the threads of deal.II's task scheduler
     * (MultithreadInfo::n_threads()). An empty array has an empty stream.
     */
    std::vector<std::vector<unsigned char>>
    compress_arrays(const std::vector<std::size_t> &sizes,
                    const Fill                     &fill,
                    const int                       level,
                    const std::size_t               block = block_bytes)
    {
      struct Block
      {
        std::size_t array, begin, end;
        bool        whole, last;
      };
      std::vector<Block> blocks;
      for (std::size_t a = 0; a < sizes.size(); ++a)
        {
          AssertThrow(sizes[a] < (std::size_t(1) << 32),
                      dealii::ExcMessage(
                        "VTU writer: a DataArray of " +
                        std::to_string(sizes[a]) +
                        " bytes does not fit the 32-bit sizes of the "
                        "format."));
          for (std::size_t begin = 0; begin < sizes[a]; begin += block)
            {
              const std::size_t end = std::min(begin + block, sizes[a]);
              blocks.push_back(
                {a, begin, end, sizes[a] <= block, end == sizes[a]});
            }
        }

      std::vector<std::vector<unsigned char>> pieces(blocks.size());
      std::vector<uLong>                      checksums(blocks.size());
      std::vector<int>                        status(blocks.size(), Z_OK);
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        blocks.size(),
        [&](const std::size_t first, const std::size_t stop) {
          std::vector<unsigned char> input;
          for (std::size_t i = first; i < stop; ++i)
            {
              const Block &b = blocks[i];
              input.resize(b.end - b.begin);
              fill(b.array, b.begin, b.end, input.data());
              if (b.whole)
                {
                  uLongf length = compressBound(input.size());
                  pieces[i].resize(length);
                  status[i] = compress2(pieces[i].data(),
                                        &length,
                                        input.data(),
                                        input.size(),
                                        level);
                  pieces[i].resize(length);
                }
              else
                {
                  status[i] = deflate_block(input.data(),
                                            input.size(),
                                            level,
                                            b.last,
                                            pieces[i]);
                  checksums[i] =
                    adler32(adler32(0, nullptr, 0), input.data(), input.size());
                }
            }
        },
        1);
      for (const int s : status)
        AssertThrow(s == Z_OK,
                    dealii::ExcMessage("VTU writer: zlib could not compress "
                                       "a data array (zlib error " +
                                       std::to_string(s) + ")."));

      std::vector<std::vector<unsigned char>> streams(sizes.size());
      for (std::size_t i = 0; i < blocks.size();)
        {
          const std::size_t           a      = blocks[i].array;
          std::vector<unsigned char> &stream = streams[a];
          if (blocks[i].whole)
            stream = std::move(pieces[i++]);
          else
            {
              const auto header = zlib_header(level);
              stream.assign(header.begin(), header.end());
              uLong checksum = adler32(0, nullptr, 0);
              for (; i < blocks.size() && blocks[i].array == a; ++i)
                {
                  stream.insert(stream.end(),
                                pieces[i].begin(),
                                pieces[i].end());
                  checksum = adler32_combine(checksum,
                                             checksums[i],
                                             blocks[i].end - blocks[i].begin);
                  std::vector<unsigned char>().swap(pieces[i]);
                }
              for (int shift = 24; shift >= 0; shift -= 8)
                stream.push_back((checksum >> shift) & 0xff);
            }
        }
      return streams;
    }

    /**
     * The data text of VTU DataArrays in deal.II's compressed format: for
     * each array the base64 of the header (one block, its size twice, the
     * compressed size), then the base64 of one zlib stream of its bytes
     * (compress_arrays()), encoded on the task threads as well. An empty
     * array has an empty text, as DataOut writes it.
     */
    std::vector<std::string>
    encode_arrays(const std::vector<std::size_t> &sizes,
                  const Fill                     &fill,
                  const int                       level,
                  const std::size_t               block = block_bytes)
    {
      const std::vector<std::vector<unsigned char>> streams =
        compress_arrays(sizes, fill, level, block);
      std::vector<std::string> texts(sizes.size());
      for (std::size_t a = 0; a < sizes.size(); ++a)
        if (sizes[a] > 0)
          {
            const std::vector<unsigned char> &stream    = streams[a];
            const std::uint32_t               header[4] = {1,
                                                           std::uint32_t(sizes[a]),
                                                           std::uint32_t(sizes[a]),
                                                           std::uint32_t(stream.size())};
            texts[a].resize(base64_length(sizeof(header)) +
                            base64_length(stream.size()));
            encode_base64(reinterpret_cast<const unsigned char *>(header),
                          sizeof(header),
                          texts[a].data());
          }

      struct Piece
      {
        std::size_t array, begin, end;
      };
      std::vector<Piece> encodings;
      for (std::size_t a = 0; a < sizes.size(); ++a)
        for (std::size_t begin = 0; begin < streams[a].size();
             begin += base64_piece)
          encodings.push_back(
            {a, begin, std::min(begin + base64_piece, streams[a].size())});
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        encodings.size(),
        [&](const std::size_t first, const std::size_t stop) {
          for (std::size_t i = first; i < stop; ++i)
            {
              const Piece &p = encodings[i];
              encode_base64(streams[p.array].data() + p.begin,
                            p.end - p.begin,
                            texts[p.array].data() + base64_length(16) +
                              base64_length(p.begin));
            }
        },
        1);
      return texts;
    }

    // The data text of @p values as DataOut writes it: one compress2() of
    // the whole.
    void
    append_compressed_block(const std::vector<float> &values,
                            const int                 level,
                            std::string              &out)
    {
      out += encode_arrays(
        {values.size() * sizeof(float)},
        [&](std::size_t,
            std::size_t    begin,
            std::size_t    end,
            unsigned char *to) {
          std::memcpy(to,
                      reinterpret_cast<const unsigned char *>(values.data()) +
                        begin,
                      end - begin);
        },
        level,
        std::numeric_limits<std::size_t>::max())[0];
    }

    // The bytes of one DataArray's data text in deal.II's compressed
    // format (one zlib stream). @p name names the array in errors.
    std::vector<unsigned char>
    decode_array(const char *text, const std::size_t n, const std::string &name)
    {
      const auto refuse = [&](const std::string &why) {
        return dealii::ExcMessage("VTU reader: the DataArray " + name +
                                  " is not in the format of deal.II's "
                                  "compressed VTU (" +
                                  why + ").");
      };
      if (n == 0)
        return {};
      AssertThrow(n >= base64_length(16), refuse("no compression header"));
      const std::vector<unsigned char> head =
        decode_base64(text, base64_length(16));
      AssertThrow(head.size() == 16, refuse("no compression header"));
      std::uint32_t header[4];
      std::memcpy(header, head.data(), sizeof(header));
      AssertThrow(header[0] == 1 && header[1] == header[2],
                  refuse("not one zlib block"));
      const std::vector<unsigned char> compressed =
        decode_base64(text + base64_length(16), n - base64_length(16));
      AssertThrow(compressed.size() == header[3],
                  refuse("compressed size differs from its header"));
      std::vector<unsigned char> bytes(header[1]);
      uLongf                     length = header[1];
      const int                  status =
        uncompress(bytes.data(), &length, compressed.data(), compressed.size());
      AssertThrow(status == Z_OK && length == header[1],
                  refuse("zlib could not expand it"));
      return bytes;
    }

    std::vector<float>
    decode_compressed_block(const std::string &line, const std::string &name)
    {
      const std::vector<unsigned char> bytes =
        decode_array(line.data(), line.size(), name);
      AssertThrow(bytes.size() % sizeof(float) == 0,
                  dealii::ExcMessage("SnapshotWriter: the DataArray " + name +
                                     " that DataOut wrote does not hold "
                                     "floats."));
      std::vector<float> values(bytes.size() / sizeof(float));
      std::memcpy(values.data(), bytes.data(), bytes.size());
      return values;
    }

    // One line of @p text from @p position (without its newline), advancing
    // @p position past the newline.
    std::string
    next_line(const std::string &text, std::size_t &position)
    {
      const std::size_t end = text.find('\n', position);
      AssertThrow(end != std::string::npos,
                  dealii::ExcMessage("VTU reader: the VTU text ends in the "
                                     "middle of a line."));
      std::string line = text.substr(position, end - position);
      position         = end + 1;
      return line;
    }

    const std::string date_line = "#This file was generated by the deal.II "
                                  "library";

    // The header of a VTU text split where the date of its date line
    // starts: the text before the date, whether there is one, and the text
    // after it.
    void
    split_header_at_date(const std::string &header,
                         std::string       &before_date,
                         bool              &has_date,
                         std::string       &after_date)
    {
      const std::size_t date = header.find(date_line);
      const std::size_t date_stop =
        date == std::string::npos ? std::string::npos : header.find('\n', date);
      has_date = date_stop != std::string::npos &&
                 header.compare(date + date_line.size(), 4, " on ") == 0;
      if (has_date)
        {
          before_date = header.substr(0, date + date_line.size());
          after_date  = header.substr(date_stop);
        }
      else
        {
          before_date = header;
          after_date.clear();
        }
    }

    // The header split by split_header_at_date(), with the time of now.
    std::string
    dated_header(const std::string &before_date,
                 const bool         has_date,
                 const std::string &after_date)
    {
      if (!has_date)
        return before_date;
      return before_date + " on " + dealii::Utilities::System::get_time() +
             " at " + dealii::Utilities::System::get_date() + after_date;
    }

    // Where the point data of a VTU text start: after its <PointData line.
    std::size_t
    point_data_start(const std::string &text)
    {
      const std::size_t start = text.find("<PointData");
      AssertThrow(start != std::string::npos,
                  dealii::ExcMessage("VTU writer: DataOut wrote no point "
                                     "data."));
      const std::size_t end = text.find('\n', start);
      AssertThrow(end != std::string::npos,
                  dealii::ExcMessage("VTU writer: the VTU that DataOut "
                                     "wrote ends after <PointData."));
      return end + 1;
    }

    // The VTU text @p text (as DataOut writes it, any compression level)
    // with its binary arrays compressed at zlib @p level by encode_arrays().
    std::string
    recompress_vtu(const std::string &text, const int level)
    {
      // The data lines of the binary arrays: where each starts and ends.
      std::vector<std::pair<std::size_t, std::size_t>> lines;
      std::vector<std::string>                         names;
      for (std::size_t position = 0;
           (position = text.find("<DataArray", position)) != std::string::npos;)
        {
          const std::string opening = next_line(text, position);
          const std::size_t start   = position;
          const std::string data    = next_line(text, position);
          if (opening.find("format=\"binary\"") == std::string::npos ||
              data.find("</DataArray>") != std::string::npos)
            position = start;
          else
            {
              lines.emplace_back(start, start + data.size());
              names.push_back(opening);
            }
        }
      std::vector<std::vector<unsigned char>> bytes(lines.size());
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        lines.size(),
        [&](const std::size_t first, const std::size_t stop) {
          for (std::size_t i = first; i < stop; ++i)
            bytes[i] = decode_array(text.data() + lines[i].first,
                                    lines[i].second - lines[i].first,
                                    names[i]);
        },
        1);
      std::vector<std::size_t> sizes;
      for (const auto &b : bytes)
        sizes.push_back(b.size());
      const std::vector<std::string> data = encode_arrays(
        sizes,
        [&](const std::size_t    a,
            const std::size_t    begin,
            const std::size_t    end,
            unsigned char *const to) {
          std::memcpy(to, bytes[a].data() + begin, end - begin);
        },
        level);

      std::string result;
      std::size_t length = text.size();
      for (std::size_t i = 0; i < lines.size(); ++i)
        length += data[i].size() - (lines[i].second - lines[i].first);
      result.reserve(length);
      std::size_t written = 0;
      for (std::size_t i = 0; i < lines.size(); ++i)
        {
          result.append(text, written, lines[i].first - written);
          result += data[i];
          written = lines[i].second;
        }
      result.append(text, written, std::string::npos);
      return result;
    }
  } // namespace

  std::vector<unsigned char>
  zlib_compress(const unsigned char *data, const std::size_t n, const int level)
  {
    if (n == 0)
      {
        // The stream of nothing, still a stream.
        std::vector<unsigned char> stream(compressBound(0));
        uLongf                     length = stream.size();
        AssertThrow(compress2(stream.data(), &length, data, 0, level) == Z_OK,
                    dealii::ExcMessage("zlib could not compress nothing."));
        stream.resize(length);
        return stream;
      }
    return compress_arrays(
      {n},
      [&](std::size_t, std::size_t begin, std::size_t end, unsigned char *to) {
        std::memcpy(to, data + begin, end - begin);
      },
      level)[0];
  }

  std::vector<VtuDataArray>
  read_vtu_data_arrays(const std::string &vtu)
  {
    std::vector<VtuDataArray> arrays;
    std::size_t               position = 0;
    while ((position = vtu.find("<DataArray", position)) != std::string::npos)
      {
        VtuDataArray array;
        array.opening = next_line(vtu, position);
        AssertThrow(array.opening.find("format=\"binary\"") !=
                      std::string::npos,
                    dealii::ExcMessage("VTU reader: the DataArray " +
                                       array.opening + " is not binary."));
        const std::size_t start = position;
        const std::string data  = next_line(vtu, position);
        if (data.find("</DataArray>") != std::string::npos)
          position = start;
        else
          array.bytes = decode_array(data.data(), data.size(), array.opening);
        arrays.push_back(std::move(array));
      }
    return arrays;
  }

  std::string
  describe_output_share(const double           loop_seconds,
                        const double           wall_seconds,
                        const SnapshotTimings *writer)
  {
    std::ostringstream line;
    line << std::fixed << std::setprecision(3)
         << "Output share: " << loop_seconds << " s of " << wall_seconds
         << " s wall time on the time loop's thread (" << std::setprecision(1)
         << 100 * loop_seconds / std::max(wall_seconds, 1e-300) << " %";
    if (writer != nullptr)
      line << std::setprecision(3) << ", of which waiting for the writer "
           << writer->waited
           << " s); the writer's threads beside it: " << writer->files
           << " files, geometry " << writer->preparing << " s, derived fields "
           << writer->completing << " s, conversion and compression "
           << writer->encoding << " s, writing " << writer->writing
           << " s, records and images " << writer->callbacks
           << " s, images drawn ahead " << writer->ahead << " s.";
    else
      line << ").";
    return line.str();
  }

  template <int dim, int spacedim>
  void
  write_vtu(dealii::DataOutInterface<dim, spacedim> &data_out,
            const dealii::DataOutBase::VtkFlags     &flags,
            const std::string                       &path)
  {
    dealii::DataOutBase::VtkFlags plain = flags;
    plain.compression_level = dealii::DataOutBase::VtkFlags::no_compression;
    data_out.set_flags(plain);
    std::ostringstream out;
    data_out.write_vtu(out);
    data_out.set_flags(flags);
    const std::string text =
      recompress_vtu(out.str(),
                     AppUtilities::zlib_level(flags.compression_level));
    write_file(path, [&](std::ostream &file) {
      file.write(text.data(), text.size());
    });
  }



  FixedMeshVtu::FixedMeshVtu(const std::string                   &uncompressed,
                             const dealii::DataOutBase::VtkFlags &flags)
    : zlib_level(AppUtilities::zlib_level(flags.compression_level))
  {
    const std::string text     = recompress_vtu(uncompressed, zlib_level);
    std::size_t       position = point_data_start(text);
    split_header_at_date(text.substr(0, position),
                         header_before_date,
                         header_has_date,
                         header_after_date);
    while (true)
      {
        const std::size_t start   = position;
        const std::string opening = next_line(text, position);
        if (opening.find("</PointData>") != std::string::npos)
          {
            trailer = text.substr(start);
            break;
          }
        AssertThrow(opening.find("format=\"binary\"") != std::string::npos,
                    dealii::ExcMessage("VTU writer: DataOut wrote the "
                                       "DataArray '" +
                                       opening +
                                       "' in a format this writer does not "
                                       "reproduce."));
        const std::string data = next_line(text, position);
        sizes.push_back(decode_compressed_block(data, opening).size());
        openings.push_back(opening + '\n');
        closings.push_back(next_line(text, position) + '\n');
      }
  }



  std::vector<std::vector<float>>
  FixedMeshVtu::point_data(const std::string &vtu)
  {
    std::vector<std::vector<float>> values;
    std::size_t                     position = point_data_start(vtu);
    while (true)
      {
        const std::string opening = next_line(vtu, position);
        if (opening.find("</PointData>") != std::string::npos)
          return values;
        values.push_back(
          decode_compressed_block(next_line(vtu, position), opening));
        next_line(vtu, position);
      }
  }



  std::string
  FixedMeshVtu::text(const std::vector<std::vector<float>> &values) const
  {
    AssertThrow(values.size() == sizes.size(),
                dealii::ExcMessage(
                  "VTU writer: " + std::to_string(values.size()) +
                  " point data arrays given, the file has " +
                  std::to_string(sizes.size()) + "."));
    std::vector<std::size_t> bytes;
    for (std::size_t a = 0; a < sizes.size(); ++a)
      {
        AssertThrow(values[a].size() == sizes[a],
                    dealii::ExcMessage("VTU writer: the DataArray " +
                                       openings[a] + " was given " +
                                       std::to_string(values[a].size()) +
                                       " values, the file has " +
                                       std::to_string(sizes[a]) + "."));
        bytes.push_back(sizes[a] * sizeof(float));
      }
    const std::vector<std::string> data = encode_arrays(
      bytes,
      [&](const std::size_t    a,
          const std::size_t    begin,
          const std::size_t    end,
          unsigned char *const to) {
        std::memcpy(to,
                    reinterpret_cast<const unsigned char *>(values[a].data()) +
                      begin,
                    end - begin);
      },
      zlib_level);
    std::string text =
      dated_header(header_before_date, header_has_date, header_after_date);
    std::size_t length = text.size() + trailer.size();
    for (std::size_t a = 0; a < sizes.size(); ++a)
      length += openings[a].size() + data[a].size() + 1 + closings[a].size();
    text.reserve(length);
    for (std::size_t a = 0; a < sizes.size(); ++a)
      {
        text += openings[a];
        text += data[a];
        text += '\n';
        text += closings[a];
      }
    text += trailer;
    return text;
  }



  template <int dim>
  SnapshotWriter<dim>::SnapshotWriter(
    const std::vector<std::size_t>      &input_sizes,
    const Configure                     &configure,
    const dealii::DataOutBase::VtkFlags &flags,
    const std::size_t                    queue_bytes)
    : input_sizes(input_sizes)
    , max_queued([&]() {
      std::size_t bytes = 0;
      for (const std::size_t size : input_sizes)
        bytes += size * sizeof(double);
      return unsigned(
        std::clamp<std::size_t>(queue_bytes / std::max<std::size_t>(bytes, 1),
                                2,
                                1u << 16));
    }())
    , zlib_level(AppUtilities::zlib_level(flags.compression_level))
  {
    worker =
      std::thread([this, configure = Configure(configure), flags]() mutable {
        std::exception_ptr failure;
        const auto         start = std::chrono::steady_clock::now();
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
          times.preparing = seconds_since(start);
          prepared        = true;
          prepare_error   = failure;
          error           = failure;
        }
        changed.notify_all();
        run();
      });
    callback_worker = std::thread([this]() {
      run_callbacks();
    });
    // Each piece of ahead work spreads over the task threads itself; a few
    // side by side overlap their serial parts.
    const unsigned int n_ahead =
      std::clamp(dealii::MultithreadInfo::n_threads() / 8, 1u, 4u);
    for (unsigned int i = 0; i < n_ahead; ++i)
      ahead_workers.emplace_back([this]() {
        run_ahead();
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

    // The header, with the date line split where its date starts.
    std::size_t position = point_data_start(low);
    split_header_at_date(low.substr(0, position),
                         header_before_date,
                         header_has_date,
                         header_after_date);

    // The arrays: an opening line, the data, a closing line each, in the
    // same order in every probe.
    std::size_t position_high = point_data_start(high),
                position_zero = point_data_start(zero);
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
            if (std::find(array.reads.begin(), array.reads.end(), input) ==
                array.reads.end())
              array.reads.push_back(input);
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
    callback_worker.join();
    for (std::thread &ahead_worker : ahead_workers)
      ahead_worker.join();
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
    return compose(encode_point_data(inputs, {}));
  }

  template <int dim>
  std::vector<std::string>
  SnapshotWriter<dim>::encode_point_data(
    const std::vector<std::vector<double>> &inputs,
    std::vector<std::string>                known) const
  {
    known.resize(arrays.size());
    std::vector<std::size_t> sizes;
    for (std::size_t a = 0; a < arrays.size(); ++a)
      sizes.push_back(
        known[a].empty() ? arrays[a].sources.size() * sizeof(float) : 0);
    // The conversion to float runs on the compressing threads, block by
    // block.
    std::vector<std::string> data = encode_arrays(
      sizes,
      [&](const std::size_t    a,
          const std::size_t    begin,
          const std::size_t    end,
          unsigned char *const out) {
        const std::vector<Source> &sources = arrays[a].sources;
        for (std::size_t k = begin / sizeof(float); k < end / sizeof(float);
             ++k)
          {
            const Source &s = sources[k];
            const float   value =
              s.input == no_input ?
                  0.f :
                  float(s.from_sum ? inputs[s.input][s.index] + 0.0 :
                                     inputs[s.input][s.index]);
            std::memcpy(out + (k * sizeof(float) - begin),
                        &value,
                        sizeof(float));
          }
      },
      zlib_level);
    for (std::size_t a = 0; a < arrays.size(); ++a)
      if (!known[a].empty())
        data[a] = std::move(known[a]);
    return data;
  }

  template <int dim>
  std::string
  SnapshotWriter<dim>::compose(const std::vector<std::string> &data) const
  {
    std::string text =
      dated_header(header_before_date, header_has_date, header_after_date);
    std::size_t length = text.size() + trailer.size();
    for (std::size_t a = 0; a < arrays.size(); ++a)
      length += arrays[a].opening.size() + data[a].size() + 1 +
                arrays[a].closing.size();
    text.reserve(length);
    for (std::size_t a = 0; a < arrays.size(); ++a)
      {
        text += arrays[a].opening;
        text += data[a];
        text += '\n';
        text += arrays[a].closing;
      }
    text += trailer;
    return text;
  }

  template <int dim>
  unsigned int
  SnapshotWriter<dim>::queue_length() const
  {
    return max_queued;
  }

  template <int dim>
  SnapshotTimings
  SnapshotWriter<dim>::timings() const
  {
    std::unique_lock<std::mutex> lock(mutex);
    return times;
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
                             Complete                         complete,
                             std::function<void()>            ahead)
  {
    if (!complete)
      check_sizes(path, inputs);
    const auto                   start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&]() {
      return error || queue.size() + busy < max_queued;
    });
    times.waited += seconds_since(start);
    throw_pending_error();
    std::shared_ptr<Ahead> work;
    if (ahead)
      {
        work       = std::make_shared<Ahead>();
        work->work = std::move(ahead);
        ahead_queue.push_back(work);
      }
    queue.push_back({path,
                     std::move(inputs),
                     {std::move(after), std::move(work)},
                     std::move(complete)});
    lock.unlock();
    changed.notify_all();
  }

  template <int dim>
  void
  SnapshotWriter<dim>::flush()
  {
    const auto                   start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&]() {
      return prepared && queue.empty() && !busy && callbacks.empty() &&
             !calling && ahead_queue.empty() && ahead_running == 0;
    });
    times.waited += seconds_since(start);
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
          {
            worker_done = true;
            changed.notify_all();
            return;
          }
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
        SnapshotTimings    spent;
        try
          {
            auto start = std::chrono::steady_clock::now();
            if (job.complete)
              {
                job.complete(job.inputs);
                check_sizes(job.path, job.inputs);
              }
            spent.completing = seconds_since(start);
            start            = std::chrono::steady_clock::now();
            // An array whose inputs are those of the last snapshot (a cell
            // field of the fixed mesh, say) keeps its text.
            std::vector<std::string> known(arrays.size());
            if (!last_inputs.empty())
              for (std::size_t a = 0; a < arrays.size(); ++a)
                if (std::all_of(arrays[a].reads.begin(),
                                arrays[a].reads.end(),
                                [&](const std::uint32_t i) {
                                  return std::equal(
                                    job.inputs[i].begin(),
                                    job.inputs[i].end(),
                                    last_inputs[i].begin(),
                                    last_inputs[i].end(),
                                    [](const double x, const double y) {
                                      return std::memcmp(&x, &y, sizeof(x)) ==
                                             0;
                                    });
                                }))
                  known[a] = std::move(last_texts[a]);
            last_texts  = encode_point_data(job.inputs, std::move(known));
            last_inputs = std::move(job.inputs);
            const std::string text = compose(last_texts);
            spent.encoding         = seconds_since(start);
            start                  = std::chrono::steady_clock::now();
            write_file(job.path, [&](std::ostream &out) {
              out.write(text.data(), text.size());
            });
            spent.writing = seconds_since(start);
            spent.files   = 1;
          }
        catch (...)
          {
            failure = std::current_exception();
          }
        lock.lock();
        times.completing += spent.completing;
        times.encoding += spent.encoding;
        times.writing += spent.writing;
        times.files += spent.files;
        // The callback goes to the second thread, so that the next
        // snapshot is encoded while it runs.
        // A callback without an after function still reports the error of
        // its ahead work.
        if (!failure && (job.callback.after || job.callback.ahead))
          {
            changed.wait(lock, [&]() {
              return error || callbacks.size() < max_queued;
            });
            if (!error)
              callbacks.push_back(std::move(job.callback));
            changed.notify_all();
          }
        busy = false;
        if (failure && !error)
          error = failure;
        changed.notify_all();
      }
  }

  template <int dim>
  void
  SnapshotWriter<dim>::run_callbacks()
  {
    // The callbacks of files written before a later file failed still run
    // (their records name complete files); after a callback failed, none.
    bool                         failed = false;
    std::unique_lock<std::mutex> lock(mutex);
    while (true)
      {
        changed.wait(lock, [&]() {
          return worker_done || !callbacks.empty();
        });
        if (callbacks.empty())
          return;
        Callback callback = std::move(callbacks.front());
        callbacks.pop_front();
        if (failed)
          {
            changed.notify_all();
            continue;
          }
        calling = true;
        if (callback.ahead)
          changed.wait(lock, [&]() {
            return callback.ahead->done;
          });
        std::exception_ptr failure =
          callback.ahead ? callback.ahead->error : nullptr;
        lock.unlock();
        const auto start = std::chrono::steady_clock::now();
        if (!failure && callback.after)
          try
            {
              callback.after();
            }
          catch (...)
            {
              failure = std::current_exception();
            }
        callback = {};
        lock.lock();
        times.callbacks += seconds_since(start);
        calling = false;
        failed  = failed || failure;
        if (failure && !error)
          error = failure;
        changed.notify_all();
      }
  }

  template <int dim>
  void
  SnapshotWriter<dim>::run_ahead()
  {
    // The work runs even after an error: the callbacks of files written
    // before it still run, and need their work done.
    std::unique_lock<std::mutex> lock(mutex);
    while (true)
      {
        changed.wait(lock, [&]() {
          return stopping || !ahead_queue.empty();
        });
        if (ahead_queue.empty())
          return;
        const std::shared_ptr<Ahead> item = std::move(ahead_queue.front());
        ahead_queue.pop_front();
        ++ahead_running;
        lock.unlock();
        std::exception_ptr failure;
        const auto         start = std::chrono::steady_clock::now();
        try
          {
            item->work();
          }
        catch (...)
          {
            failure = std::current_exception();
          }
        // What the work captured is not needed any more.
        item->work         = nullptr;
        const double spent = seconds_since(start);
        lock.lock();
        times.ahead += spent;
        item->error = failure;
        item->done  = true;
        --ahead_running;
        changed.notify_all();
      }
  }

  template class SnapshotWriter<2>;
  template class SnapshotWriter<3>;
  template void
  write_vtu(dealii::DataOutInterface<2, 2> &,
            const dealii::DataOutBase::VtkFlags &,
            const std::string &);
  template void
  write_vtu(dealii::DataOutInterface<3, 3> &,
            const dealii::DataOutBase::VtkFlags &,
            const std::string &);
  template void
  write_vtu(dealii::DataOutInterface<2, 3> &,
            const dealii::DataOutBase::VtkFlags &,
            const std::string &);
} // namespace AppUtilities
