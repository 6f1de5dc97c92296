// SPDX-License-Identifier: LGPL-2.1-or-later
#include "png_image.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "../common/app_utilities.h"
#include "../common/snapshot_writer.h"
#include <zlib.h>

namespace Wave2D
{
  namespace
  {
    // 5x7 glyphs, one byte per row, bit 4 the leftmost pixel.
    const std::map<char, std::array<std::uint8_t, 7>> &
    font()
    {
      static const std::map<char, std::array<std::uint8_t, 7>> glyphs = {
        {'0', {14, 17, 19, 21, 25, 17, 14}},
        {'1', {4, 12, 4, 4, 4, 4, 14}},
        {'2', {14, 17, 1, 2, 4, 8, 31}},
        {'3', {31, 2, 4, 2, 1, 17, 14}},
        {'4', {2, 6, 10, 18, 31, 2, 2}},
        {'5', {31, 16, 30, 1, 1, 17, 14}},
        {'6', {6, 8, 16, 30, 17, 17, 14}},
        {'7', {31, 1, 2, 4, 8, 8, 8}},
        {'8', {14, 17, 17, 14, 17, 17, 14}},
        {'9', {14, 17, 17, 15, 1, 2, 12}},
        {'.', {0, 0, 0, 0, 0, 12, 12}},
        {',', {0, 0, 0, 0, 12, 4, 8}},
        {'-', {0, 0, 0, 31, 0, 0, 0}},
        {'+', {0, 4, 4, 31, 4, 4, 0}},
        {'=', {0, 0, 31, 0, 31, 0, 0}},
        {':', {0, 12, 12, 0, 12, 12, 0}},
        {'(', {2, 4, 8, 8, 8, 4, 2}},
        {')', {8, 4, 2, 2, 2, 4, 8}},
        {'/', {1, 1, 2, 4, 8, 16, 16}},
        {'%', {24, 25, 2, 4, 8, 19, 3}},
        {'|', {4, 4, 4, 4, 4, 4, 4}},
        {' ', {0, 0, 0, 0, 0, 0, 0}},
        {'a', {0, 0, 14, 1, 15, 17, 15}},
        {'b', {16, 16, 22, 25, 17, 17, 30}},
        {'c', {0, 0, 14, 16, 16, 17, 14}},
        {'d', {1, 1, 13, 19, 17, 17, 15}},
        {'e', {0, 0, 14, 17, 31, 16, 14}},
        {'f', {6, 9, 8, 28, 8, 8, 8}},
        {'g', {0, 15, 17, 17, 15, 1, 14}},
        {'h', {16, 16, 22, 25, 17, 17, 17}},
        {'i', {4, 0, 12, 4, 4, 4, 14}},
        {'k', {16, 16, 18, 20, 24, 20, 18}},
        {'l', {12, 4, 4, 4, 4, 4, 14}},
        {'m', {0, 0, 26, 21, 21, 17, 17}},
        {'n', {0, 0, 22, 25, 17, 17, 17}},
        {'o', {0, 0, 14, 17, 17, 17, 14}},
        {'p', {0, 0, 30, 17, 30, 16, 16}},
        {'r', {0, 0, 22, 25, 16, 16, 16}},
        {'s', {0, 0, 14, 16, 14, 1, 30}},
        {'t', {8, 8, 28, 8, 8, 9, 6}},
        {'u', {0, 0, 17, 17, 17, 19, 13}},
        {'v', {0, 0, 17, 17, 17, 10, 4}},
        {'w', {0, 0, 17, 17, 21, 21, 10}},
        {'x', {0, 0, 17, 10, 4, 10, 17}},
        {'y', {0, 0, 17, 17, 15, 1, 14}},
        {'z', {0, 0, 31, 2, 4, 8, 31}},
        {'G', {14, 17, 16, 23, 17, 17, 15}},
        {'P', {30, 17, 17, 30, 16, 16, 16}},
        {'U', {17, 17, 17, 17, 17, 17, 14}},
        {'R', {30, 17, 17, 30, 20, 18, 17}},
        {'H', {17, 17, 17, 31, 17, 17, 17}},
        {'S', {15, 16, 16, 14, 1, 1, 30}},
        {'T', {31, 4, 4, 4, 4, 4, 4}},
        {'D', {28, 18, 17, 17, 17, 18, 28}},
        {'E', {31, 16, 16, 30, 16, 16, 31}},
        {'C', {14, 17, 16, 16, 16, 17, 14}},
        {'F', {31, 16, 16, 30, 16, 16, 16}},
        {'M', {17, 27, 21, 21, 17, 17, 17}},
        {'N', {17, 17, 25, 21, 19, 17, 17}},
        {'A', {14, 17, 17, 31, 17, 17, 17}},
        {'L', {16, 16, 16, 16, 16, 16, 31}},
        {'I', {14, 4, 4, 4, 4, 4, 14}},
        {'O', {14, 17, 17, 17, 17, 17, 14}},
        {'B', {30, 17, 17, 30, 17, 17, 30}},
        {'V', {17, 17, 17, 17, 17, 10, 4}},
        {'W', {17, 17, 17, 21, 21, 21, 10}},
        {'X', {17, 17, 10, 4, 10, 17, 17}},
        {'Y', {17, 17, 10, 4, 4, 4, 4}},
        {'K', {17, 18, 20, 24, 20, 18, 17}},
        {'j', {2, 0, 6, 2, 2, 18, 12}},
        {'q', {0, 0, 13, 19, 15, 1, 1}}};
      return glyphs;
    }

    std::string
    short_number(const double value)
    {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.3g", value);
      return buffer;
    }
  } // namespace



  Image::Image(const unsigned int width,
               const unsigned int height,
               const Color       &background)
    : w(width)
    , h(height)
    , pixels(3 * std::size_t(width) * height)
  {
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = background[i % 3];
  }



  void
  Image::set(const int x, const int y, const Color &color)
  {
    if (x < 0 || y < 0 || x >= int(w) || y >= int(h))
      return;
    std::copy(color.begin(),
              color.end(),
              &pixels[3 * (std::size_t(y) * w + x)]);
  }



  void
  Image::line(double       x0,
              double       y0,
              const double x1,
              const double y1,
              const Color &color)
  {
    const int n =
      std::max(1,
               int(std::ceil(std::max(std::abs(x1 - x0), std::abs(y1 - y0)))));
    for (int i = 0; i <= n; ++i)
      set(int(std::lround(x0 + (x1 - x0) * i / n)),
          int(std::lround(y0 + (y1 - y0) * i / n)),
          color);
  }



  void
  Image::text(const int          x,
              const int          y,
              const std::string &text,
              const Color       &color,
              const int          scale)
  {
    int cursor = x;
    for (const char c : text)
      {
        const auto it = font().find(c);
        if (it != font().end())
          for (int row = 0; row < 7; ++row)
            for (int col = 0; col < 5; ++col)
              if (it->second[row] & (16 >> col))
                for (int a = 0; a < scale; ++a)
                  for (int b = 0; b < scale; ++b)
                    set(cursor + col * scale + a, y + row * scale + b, color);
        cursor += 6 * scale;
      }
  }



  Image::Color
  color_map(const double value)
  {
    const double v = std::clamp(value, 0., 1.);
    // white -> yellow -> red -> dark red: magnitudes read well on white.
    static const double stops[5][3] = {{255, 255, 255},
                                       {255, 230, 110},
                                       {245, 120, 40},
                                       {190, 20, 30},
                                       {70, 0, 20}};
    const double        s           = v * 4;
    const int           i           = std::min(3, int(s));
    const double        f           = s - i;
    Image::Color        result;
    for (unsigned int k = 0; k < 3; ++k)
      result[k] =
        std::uint8_t(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
    return result;
  }



  void
  Image::triangle(const std::array<double, 6> &p,
                  const std::array<double, 3> &v,
                  const int                    first_row,
                  const int                    end_row)
  {
    const double x_min = std::floor(std::min({p[0], p[2], p[4]})),
                 x_max = std::ceil(std::max({p[0], p[2], p[4]})),
                 y_min = std::floor(std::min({p[1], p[3], p[5]})),
                 y_max = std::ceil(std::max({p[1], p[3], p[5]}));
    const double det =
      (p[2] - p[0]) * (p[5] - p[1]) - (p[4] - p[0]) * (p[3] - p[1]);
    if (std::abs(det) < 1e-12)
      return;
    for (int y = std::max(int(y_min), first_row);
         y <= std::min(int(y_max), end_row - 1);
         ++y)
      for (int x = int(x_min); x <= int(x_max); ++x)
        {
          const double px = x + 0.5, py = y + 0.5;
          const double l1 =
            ((px - p[0]) * (p[5] - p[1]) - (p[4] - p[0]) * (py - p[1])) / det;
          const double l2 =
            ((p[2] - p[0]) * (py - p[1]) - (px - p[0]) * (p[3] - p[1])) / det;
          const double l0 = 1 - l1 - l2;
          if (l0 >= -1e-9 && l1 >= -1e-9 && l2 >= -1e-9)
            set(x, y, color_map(l0 * v[0] + l1 * v[1] + l2 * v[2]));
        }
  }



  std::string
  Image::png() const
  {
    std::vector<std::uint8_t> raw;
    raw.reserve((3 * std::size_t(w) + 1) * h);
    for (unsigned int y = 0; y < h; ++y)
      {
        raw.push_back(0); // filter: none
        raw.insert(raw.end(),
                   pixels.begin() + 3 * std::size_t(y) * w,
                   pixels.begin() + 3 * std::size_t(y + 1) * w);
      }
    // Large images are compressed on several threads, at zlib's best
    // speed: four times faster than its default level for files a third
    // larger, the same pixels.
    const std::vector<std::uint8_t> compressed =
      AppUtilities::zlib_compress(raw.data(), raw.size(), 1);

    std::ostringstream out;
    const auto         put32 = [&](std::vector<std::uint8_t> &b,
                           const std::uint32_t        v) {
      for (int s = 24; s >= 0; s -= 8)
        b.push_back((v >> s) & 255);
    };
    const auto chunk = [&](const char                      *type,
                           const std::vector<std::uint8_t> &data) {
      std::vector<std::uint8_t> b;
      put32(b, data.size());
      std::vector<std::uint8_t> body(type, type + 4);
      body.insert(body.end(), data.begin(), data.end());
      b.insert(b.end(), body.begin(), body.end());
      put32(b, crc32(0, body.data(), body.size()));
      out.write(reinterpret_cast<const char *>(b.data()), b.size());
    };
    const std::uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    out.write(reinterpret_cast<const char *>(signature), 8);
    std::vector<std::uint8_t> header;
    put32(header, w);
    put32(header, h);
    header.insert(header.end(), {8, 2, 0, 0, 0}); // 8-bit RGB
    chunk("IHDR", header);
    chunk("IDAT", compressed);
    chunk("IEND", {});
    return out.str();
  }



  void
  Image::write_png(const std::string &filename) const
  {
    write_png_file(filename, png());
  }



  void
  write_png_file(const std::string &filename, const std::string &png)
  {
    AppUtilities::write_file(
      filename,
      [&](std::ostream &file) {
        file.write(png.data(), png.size());
      },
      true);
  }



  void
  plot_panel(Image                     &image,
             const PanelLayout         &layout,
             const unsigned int         k,
             const std::vector<double> &times,
             const std::vector<Curve>  &curves,
             const std::string         &label,
             const bool                 label_ticks)
  {
    const Image::Color black = {{0, 0, 0}}, grey = {{190, 190, 190}};
    const int    left = layout.left, right = layout.right, width = layout.width;
    const double t0 = times.empty() ? 0 : times.front(),
                 t1 = times.empty() ? 1 : times.back();
    // A value that is not finite would become a pixel index: the callers
    // stop a run before one reaches a plot.
    AssertThrow(AppUtilities::first_non_finite(times) == times.size(),
                dealii::ExcMessage("A plot's time axis holds a value that "
                                   "is not finite."));
    for (const Curve &curve : curves)
      AssertThrow(AppUtilities::first_non_finite(*curve.values) ==
                    curve.values->size(),
                  dealii::ExcMessage("The curve '" + label +
                                     "' holds a value that is not finite."));
    double peak = 0;
    for (const Curve &curve : curves)
      for (std::size_t i = 0; i < times.size(); ++i)
        peak = std::max(peak, std::abs((*curve.values)[i]));
    if (peak == 0)
      peak = 1;
    const int y_top    = layout.top + k * layout.panel_height,
              y_bottom = y_top + layout.panel_height - layout.axis_gap;
    const double y_mid = 0.5 * (y_top + y_bottom);
    const auto   X     = [&](const double t) {
      return left + (t - t0) / (t1 - t0 + 1e-300) * (width - left - right);
    };
    const auto Y = [&](const double u) {
      return y_mid - u / peak * 0.5 * (y_bottom - y_top);
    };
    image.line(left, y_top, left, y_bottom, black);
    image.line(left, y_bottom, width - right, y_bottom, black);
    image.line(left, y_mid, width - right, y_mid, grey);
    image.text(8, y_top, label, black);
    image.text(8, y_top + 24, "+" + layout.format(peak), black);
    image.text(8, int(y_mid) - 7, "0", black);
    image.text(8, y_bottom - 14, "-" + layout.format(peak), black);
    for (std::size_t i = 1; i < times.size(); ++i)
      for (const Curve &curve : curves)
        image.line(X(times[i - 1]),
                   Y((*curve.values)[i - 1]),
                   X(times[i]),
                   Y((*curve.values)[i]),
                   curve.color);
    for (int tick = 0; tick <= 4; ++tick)
      {
        const double t = t0 + tick * (t1 - t0) / 4;
        image.line(X(t), y_bottom, X(t), y_bottom + 5, black);
        if (label_ticks)
          image.text(int(X(t)) - (tick == 4 ? layout.last_tick_shift : 20),
                     y_bottom + 10,
                     layout.format(t),
                     black);
      }
  }



  void
  plot_traces(const std::string                      &filename,
              const std::vector<double>              &times,
              const std::vector<std::vector<double>> &ux,
              const std::vector<std::vector<double>> &uy,
              const std::vector<std::string>         &labels)
  {
    const unsigned int n_panels = std::max<std::size_t>(1, ux.size());
    const PanelLayout  layout{230, 60, 50, 230, 1280, 30, short_number, 60};
    Image image(layout.width, layout.top + n_panels * layout.panel_height + 40);
    const Image::Color black = {{0, 0, 0}}, blue = {{20, 80, 200}},
                       red = {{210, 40, 30}};
    image.text(layout.left,
               12,
               "Receiver displacement (m) against time (s):",
               black);
    image.text(layout.left + 560, 12, "ux", blue);
    image.text(layout.left + 620, 12, "uy", red);
    for (unsigned int k = 0; k < ux.size(); ++k)
      plot_panel(image,
                 layout,
                 k,
                 times,
                 {{&ux[k], blue}, {&uy[k], red}},
                 labels[k],
                 k + 1 == ux.size());
    image.write_png(filename);
  }



  void
  fill_triangles(Image                             &image,
                 const GPUAssembly::Wave::WaveMesh &mesh,
                 const std::vector<double>         &x,
                 const std::vector<double>         &y,
                 const std::vector<double>         &value)
  {
    const int height = image.height();
    // Bands of rows on the task threads, each drawing its cells in order:
    // every pixel ends as the last cell over it colours it, as in one pass.
    // Each triangle is listed once in every band its rows reach (a
    // counting sort, which keeps the cells' order), so that a band visits
    // its own triangles only.
    const unsigned int nv          = mesh.nodes_per_cell;
    const unsigned int n_triangles = mesh.n_cells() * (nv - 2);
    constexpr int      band_rows   = 16;
    const int          n_bands     = (height + band_rows - 1) / band_rows;
    const auto         corners     = [&](const unsigned int i) {
      const unsigned int c = i / (nv - 2), t = i % (nv - 2);
      return std::array<unsigned int, 3>{{mesh.cells[c * nv],
                                          mesh.cells[c * nv + t + 1],
                                          mesh.cells[c * nv + t + 2]}};
    };
    // The bands [first, last] whose rows triangle i may colour.
    const auto bands = [&](const unsigned int i) {
      const auto   k    = corners(i);
      const double low  = std::floor(std::min({y[k[0]], y[k[1]], y[k[2]]})),
                   high = std::ceil(std::max({y[k[0]], y[k[1]], y[k[2]]}));
      const int first   = int(std::clamp(low, 0., double(height - 1))),
                last    = int(std::clamp(high, 0., double(height - 1)));
      return std::make_pair(first / band_rows, last / band_rows);
    };
    std::vector<unsigned int> band_start(n_bands + 1, 0);
    for (unsigned int i = 0; i < n_triangles; ++i)
      {
        const auto [first, last] = bands(i);
        for (int b = first; b <= last; ++b)
          ++band_start[b + 1];
      }
    for (int b = 0; b < n_bands; ++b)
      band_start[b + 1] += band_start[b];
    std::vector<unsigned int> band_triangles(band_start.back());
    {
      std::vector<unsigned int> next(band_start.begin(), band_start.end() - 1);
      for (unsigned int i = 0; i < n_triangles; ++i)
        {
          const auto [first, last] = bands(i);
          for (int b = first; b <= last; ++b)
            band_triangles[next[b]++] = i;
        }
    }
    dealii::parallel::apply_to_subranges(
      0,
      n_bands,
      [&](const int first_band, const int end_band) {
        for (int b = first_band; b < end_band; ++b)
          for (unsigned int j = band_start[b]; j < band_start[b + 1]; ++j)
            {
              const auto k = corners(band_triangles[j]);
              image.triangle(
                {{x[k[0]], y[k[0]], x[k[1]], y[k[1]], x[k[2]], y[k[2]]}},
                {{value[k[0]], value[k[1]], value[k[2]]}},
                b * band_rows,
                std::min((b + 1) * band_rows, height));
            }
      },
      1);
  }



  Image
  field_image(const std::string                 &filename,
              const GPUAssembly::Wave::WaveMesh &mesh,
              const std::vector<double>         &u,
              const double                       scale,
              const std::string                 &title)
  {
    const auto   box   = mesh.bounding_box();
    const int    width = 1200, margin = 20, header = 40;
    const double pixels_per_metre =
      (width - 2 * margin) / std::max(box[2] - box[0], 1e-300);
    const int height =
      std::min(4000,
               int(header + 2 * margin + (box[3] - box[1]) * pixels_per_metre));
    Image               image(width, height, {{235, 235, 235}});
    std::vector<double> magnitude(mesh.n_nodes);
    double              peak = 0;
    for (unsigned int i = 0; i < mesh.n_nodes; ++i)
      {
        magnitude[i] = std::hypot(u[2 * i], u[2 * i + 1]);
        // Not finite, it would become a colour index: the callers stop a
        // run before such a field reaches an image.
        AssertThrow(std::isfinite(magnitude[i]),
                    dealii::ExcMessage("The field drawn into " + filename +
                                       " is not finite at node " +
                                       std::to_string(i) + "."));
        peak = std::max(peak, magnitude[i]);
      }
    const double top = scale > 0 ? scale : (peak > 0 ? peak : 1);
    const auto   X   = [&](const unsigned int n) {
      return margin + (mesh.coordinates[2 * n] - box[0]) * pixels_per_metre;
    };
    const auto Y = [&](const unsigned int n) {
      return height - margin -
             (mesh.coordinates[2 * n + 1] - box[1]) * pixels_per_metre;
    };
    std::vector<double> x(mesh.n_nodes), y(mesh.n_nodes);
    for (unsigned int i = 0; i < mesh.n_nodes; ++i)
      {
        x[i] = X(i);
        y[i] = Y(i);
      }
    std::vector<double> value(mesh.n_nodes);
    for (unsigned int i = 0; i < mesh.n_nodes; ++i)
      value[i] = magnitude[i] / top;
    fill_triangles(image, mesh, x, y, value);
    image.text(margin,
               10,
               title + "  |u| from 0 to " + short_number(top) + " m",
               {{0, 0, 0}});
    return image;
  }
} // namespace Wave2D
