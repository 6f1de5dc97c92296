// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' field images: fill_triangles() (bands of rows on the task
// threads, each visiting the triangles that reach it) must give every pixel
// the colour of the last triangle over it, as filling the triangles one
// after the other in the order of the cells does. Checked on meshes of
// triangles and of quadrilaterals whose cells overlap heavily, span many
// bands, and reach beyond the image, by comparing the PNG files byte for
// byte (the same pixels give the same bytes).

#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>

#include "png_image.h"

namespace
{
  int n_failures = 0;

  void
  check(const bool ok, const std::string &what)
  {
    std::cout << (ok ? "  ok: " : "  FAILED: ") << what << std::endl;
    if (!ok)
      ++n_failures;
  }

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
    check(!a.empty() && a == b,
          "the banded image's PNG (" + std::to_string(a.size()) +
            " bytes) equals the one of the triangles filled in order (" +
            std::to_string(b.size()) + " bytes)");
    check(a != contents(name + "_blank.png"),
          "the cells coloured the image (it differs from a blank one)");
  }
} // namespace

int
main()
{
  compare(3, 4000);
  compare(4, 3000);
  if (n_failures != 0)
    {
      std::cout << n_failures << " check(s) failed" << std::endl;
      return 1;
    }
  std::cout << "All checks passed." << std::endl;
  return 0;
}
