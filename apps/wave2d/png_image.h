// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef wave2d_png_image_h
#define wave2d_png_image_h

#include <gpu_assembly/wave/elastic_wave_system.h>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace Wave2D
{
  /**
   * An RGB raster written as PNG through zlib: enough to plot receiver
   * traces and render displacement snapshots without a plotting package.
   */
  class Image
  {
  public:
    using Color = std::array<std::uint8_t, 3>;

    Image(const unsigned int width,
          const unsigned int height,
          const Color       &background = {{255, 255, 255}});

    void
    set(const int x, const int y, const Color &color);

    void
    line(double       x0,
         double       y0,
         const double x1,
         const double y1,
         const Color &color);

    /// Text in a 5x7 pixel font scaled by @p scale (digits, letters,
    /// and . , - + = : ( ) / %).
    void
    text(const int          x,
         const int          y,
         const std::string &text,
         const Color       &color,
         const int          scale = 2);

    /// Fill a triangle (pixel coordinates) with colors interpolated from
    /// values at its corners through the colormap of color_map(), in the
    /// rows [@p first_row, @p end_row) only, so that bands of rows can be
    /// filled on separate threads.
    void
    triangle(const std::array<double, 6> &xy,
             const std::array<double, 3> &v,
             const int                    first_row = 0,
             const int end_row = std::numeric_limits<int>::max());

    /// Throws if the file cannot be written.
    /// The bytes of the image's PNG file (8-bit RGB, unfiltered rows, one
    /// zlib stream compressed in blocks on the task threads).
    std::string
    png() const;

    /// Writes png() to @p filename, as write_png_file() does.
    void
    write_png(const std::string &filename) const;

    unsigned int
    width() const
    {
      return w;
    }

    unsigned int
    height() const
    {
      return h;
    }

  private:
    unsigned int              w, h;
    std::vector<std::uint8_t> pixels;
  };

  /// A perceptual-ish colormap from dark blue (0) through white to dark
  /// red (1).
  Image::Color
  color_map(const double value);

  /**
   * Where plot_panel() draws in its image: panel k spans the rows from
   * top + k panel_height, its time axis axis_gap rows above the next
   * panel, its curves from column left to right columns before the
   * image's width; numbers are written by format, the last tick's label
   * starts last_tick_shift columns before its tick.
   */
  struct PanelLayout
  {
    int                                      left, right, top, panel_height;
    int                                      width, axis_gap;
    std::function<std::string(const double)> format;
    int                                      last_tick_shift;
  };

  /// A curve of a panel: values at the panel's times, in one colour.
  struct Curve
  {
    const std::vector<double> *values;
    Image::Color               color;
  };

  /**
   * Panel @p k of a plot against time: the time axis, the zero line, the
   * curves scaled to their common peak (drawn segment by segment, each
   * segment in every curve before the next), @p label with the peak, and
   * five ticks on the time axis, with their times where @p label_ticks.
   */
  void
  plot_panel(Image                     &image,
             const PanelLayout         &layout,
             const unsigned int         k,
             const std::vector<double> &times,
             const std::vector<Curve>  &curves,
             const std::string         &label,
             const bool                 label_ticks);

  /**
   * One panel per receiver, both displacement components against time,
   * with axes, zero line, and labels.
   */
  void
  plot_traces(const std::string                      &filename,
              const std::vector<double>              &times,
              const std::vector<std::vector<double>> &ux,
              const std::vector<std::vector<double>> &uy,
              const std::vector<std::string>         &labels);

  /**
   * Fill the cells of @p mesh (split in triangles as fans from their first
   * node) into @p image, node n at pixel (@p x[n], @p y[n]) with the colour
   * of @p value[n] (0 to 1) through color_map(), on the task threads: each
   * pixel ends in the colour the last triangle over it gives, as when the
   * triangles are filled one after the other in the order of the cells.
   */
  void
  fill_triangles(Image                             &image,
                 const GPUAssembly::Wave::WaveMesh &mesh,
                 const std::vector<double>         &x,
                 const std::vector<double>         &y,
                 const std::vector<double>         &value);

  /// Writes the PNG bytes @p png (Image::png()) to @p filename through
  /// AppUtilities::write_file ("<filename>.partial", then renamed).
  void
  write_png_file(const std::string &filename, const std::string &png);

  /**
   * The image of the displacement magnitude |u| on the mesh (quadrilaterals
   * split in two triangles), colour scale from 0 to @p scale (0: the
   * field's own maximum), with a title; @p filename, the file it is drawn
   * for, names it in errors (a value that is not finite).
   */
  Image
  field_image(const std::string                 &filename,
              const GPUAssembly::Wave::WaveMesh &mesh,
              const std::vector<double>         &displacement,
              const double                       scale,
              const std::string                 &title);
} // namespace Wave2D

#endif
