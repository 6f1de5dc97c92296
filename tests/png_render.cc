// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' field images: fill_triangles() (bands of rows on the task
// threads, each visiting the triangles that reach it) must give every pixel
// the colour of the last triangle over it, as filling the triangles one
// after the other in the order of the cells does. Checked on meshes of
// triangles and of quadrilaterals whose cells overlap heavily, span many
// bands, and reach beyond the image, by comparing the PNG files byte for
// byte (the same pixels give the same bytes). Then the PNG encoding of an
// image larger than many compression blocks (its zlib stream deflated in
// blocks on the task threads and joined): a valid PNG whose chunks' CRCs
// hold and whose zlib stream (its Adler-32 checked by zlib) expands to the
// image's rows, as the stream of one compress2() call over them does.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>

#include "png_image.h"
#include "tests.h"
#include <zlib.h>

namespace
{
  Testing::Checks checks;

  std::string
  contents(const std::string &path)
  {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  }

  void
  compare(const unsigned int nodes_per_cell, const unsigned int n_cells)
  {
    const int width = 300, height = 211;
    std::cout << n_cells << " cells of " << nodes_per_cell << " nodes on "
              << width << " x " << height << " pixels" << std::endl;
    std::mt19937                           random(nodes_per_cell * n_cells);
    std::uniform_real_distribution<double> along_x(-20, width + 20),
      along_y(-20, height + 20), size(0.5, 12), unit(0, 1);
    GPUAssembly::Wave::WaveMesh mesh;
    mesh.nodes_per_cell = nodes_per_cell;
    std::vector<double> x, y, value;
    for (unsigned int c = 0; c < n_cells; ++c)
      {
        // Mostly small cells, every 50th one tall enough to cross many
        // bands of rows.
        const double cx = along_x(random), cy = along_y(random),
                     s = c % 50 == 0 ? 8 * size(random) : size(random);
        for (unsigned int k = 0; k < nodes_per_cell; ++k)
          {
            const double angle =
              2 * 3.14159265358979 * k / nodes_per_cell + 0.3 * unit(random);
            x.push_back(cx + s * std::cos(angle) * (c % 50 == 0 ? 0.3 : 1));
            y.push_back(cy + s * std::sin(angle) * (c % 50 == 0 ? 6 : 1));
            value.push_back(unit(random));
            mesh.cells.push_back(mesh.n_nodes++);
          }
      }

    Wave2D::Image banded(width, height), sequential(width, height),
      blank(width, height);
    Wave2D::fill_triangles(banded, mesh, x, y, value);
    for (unsigned int c = 0; c < n_cells; ++c)
      for (unsigned int t = 0; t + 2 < nodes_per_cell; ++t)
        {
          const unsigned int a = mesh.cells[c * nodes_per_cell],
                             b = mesh.cells[c * nodes_per_cell + t + 1],
                             d = mesh.cells[c * nodes_per_cell + t + 2];
          sequential.triangle({{x[a], y[a], x[b], y[b], x[d], y[d]}},
                              {{value[a], value[b], value[d]}});
        }
    const std::string name = "png_render_" + std::to_string(nodes_per_cell);
    banded.write_png(name + "_banded.png");
    sequential.write_png(name + "_sequential.png");
    blank.write_png(name + "_blank.png");
    const std::string a = contents(name + "_banded.png"),
                      b = contents(name + "_sequential.png");
    checks.check(!a.empty() && a == b,
                 "the banded image's PNG (" + std::to_string(a.size()) +
                   " bytes) equals the one of the triangles filled in order (" +
                   std::to_string(b.size()) + " bytes)");
    checks.check(a != contents(name + "_blank.png"),
                 "the cells coloured the image (it differs from a blank one)");
  }
  std::uint32_t
  read32(const std::string &bytes, const std::size_t at)
  {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k)
      v = (v << 8) | static_cast<unsigned char>(bytes[at + k]);
    return v;
  }

  // The bytes zlib expands @p stream to (@p size of them expected); empty
  // if zlib refuses the stream (a bad deflate block or Adler-32).
  std::vector<unsigned char>
  expand(const std::vector<unsigned char> &stream, const std::size_t size)
  {
    std::vector<unsigned char> out(size + 1);
    uLongf                     length = out.size();
    if (uncompress(out.data(), &length, stream.data(), stream.size()) != Z_OK)
      return {};
    out.resize(length);
    return out;
  }

  void
  encoding()
  {
    const int width = 1200, height = 700;
    // Rows of 3601 bytes: 2.5 MB, about 38 blocks of 64 KiB.
    std::cout << "PNG encoding of " << width << " x " << height << " pixels"
              << std::endl;
    std::mt19937                       random(7);
    std::uniform_int_distribution<int> byte(0, 255);
    Wave2D::Image                      image(width, height);
    std::vector<unsigned char>         rows;
    for (int y = 0; y < height; ++y)
      {
        rows.push_back(0); // filter: none
        for (int x = 0; x < width; ++x)
          {
            // Smooth bands with noise in every fourth row: some of the
            // image compresses well, some hardly.
            Wave2D::Image::Color c = Wave2D::color_map((x + y) % 256 / 255.);
            if (y % 4 == 0)
              c = {{std::uint8_t(byte(random)),
                    std::uint8_t(byte(random)),
                    std::uint8_t(byte(random))}};
            image.set(x, y, c);
            rows.insert(rows.end(), c.begin(), c.end());
          }
      }
    const std::string png = image.png();

    const unsigned char signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    checks.check(png.size() > 8 && std::memcmp(png.data(), signature, 8) == 0,
                 "the file starts with the PNG signature");
    std::vector<std::string>   types;
    std::vector<unsigned char> idat;
    bool                       crcs_hold = true, header_right = false;
    std::size_t                at = 8;
    while (at + 12 <= png.size())
      {
        const std::uint32_t length = read32(png, at);
        if (at + 12 + length > png.size())
          break;
        const std::string type = png.substr(at + 4, 4);
        const auto *body = reinterpret_cast<const Bytef *>(png.data() + at + 4);
        crcs_hold        = crcs_hold &&
                    crc32(0, body, 4 + length) == read32(png, at + 8 + length);
        if (type == "IHDR")
          header_right = length == 13 &&
                         read32(png, at + 8) == std::uint32_t(width) &&
                         read32(png, at + 12) == std::uint32_t(height) &&
                         png.compare(at + 16, 5, "\x08\x02\0\0\0", 5) == 0;
        if (type == "IDAT")
          idat.insert(idat.end(), body + 4, body + 4 + length);
        types.push_back(type);
        at += 12 + length;
      }
    checks.check(at == png.size() &&
                   types == std::vector<std::string>{"IHDR", "IDAT", "IEND"},
                 "the file is the chunks IHDR, IDAT, IEND, nothing after them");
    checks.check(crcs_hold, "every chunk's CRC holds");
    checks.check(header_right, "IHDR gives the size and 8-bit RGB");

    uLongf                     single_length = compressBound(rows.size());
    std::vector<unsigned char> single(single_length);
    compress2(single.data(), &single_length, rows.data(), rows.size(), 1);
    single.resize(single_length);
    checks.check(idat != single,
                 "the image's zlib stream is not one compress2() stream (the "
                 "image is large enough to be compressed in blocks)");
    const std::vector<unsigned char> pixels    = expand(idat, rows.size()),
                                     reference = expand(single, rows.size());
    checks.check(!pixels.empty(),
                 "zlib expands the image's stream (deflate blocks and Adler-32 "
                 "valid)");
    checks.check(
      pixels == reference && reference == rows,
      "the stream expands to the rows of the image, as the stream of "
      "one compress2() call does (" +
        std::to_string(rows.size()) + " bytes)");
  }
} // namespace

int
main()
{
  compare(3, 4000);
  compare(4, 3000);
  encoding();
  return checks.exit_code();
}
