// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/grid/grid_in.h>
#include <deal.II/grid/grid_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/grid/mesh_input.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace GPUAssembly
{
  namespace
  {
    std::string
    extension_of(const std::string &filename)
    {
      const auto dot   = filename.find_last_of('.');
      const auto slash = filename.find_last_of('/');
      if (dot == std::string::npos ||
          (slash != std::string::npos && dot < slash))
        return "";
      return filename.substr(dot + 1);
    }



    // Reads the next line that holds anything but white space, and counts
    // lines so that errors can name them.
    bool
    next_content_line(std::istream &input,
                      std::string  &line,
                      unsigned int &line_number)
    {
      while (std::getline(input, line))
        {
          ++line_number;
          if (line.find_first_not_of(" \t\r") != std::string::npos)
            return true;
        }
      return false;
    }
  } // namespace



  void
  read_dat(std::istream             &input,
           dealii::Triangulation<3> &tria,
           const std::string        &name)
  {
    using namespace dealii;
    std::string  line;
    unsigned int line_number = 0;

    AssertThrow(next_content_line(input, line, line_number),
                ExcMeshFile(name, 0, "the file is empty."));
    {
      std::istringstream header(line);
      std::string        keyword;
      header >> keyword;
      AssertThrow(keyword == "DAT",
                  ExcMeshFile(name,
                              line_number,
                              "expected the keyword 'DAT', found '" + keyword +
                                "'."));
    }

    long n_nodes = -1, n_elements = -1, zero = -1;
    AssertThrow(next_content_line(input, line, line_number),
                ExcMeshFile(name,
                            line_number,
                            "the file ends before the line "
                            "'<n_nodes> <n_elements> 0'."));
    {
      std::istringstream counts(line);
      std::string        rest;
      AssertThrow((counts >> n_nodes >> n_elements >> zero) && zero == 0 &&
                    !(counts >> rest),
                  ExcMeshFile(name,
                              line_number,
                              "expected '<n_nodes> <n_elements> 0', found '" +
                                line + "'."));
      AssertThrow(n_nodes >= 4 && n_elements >= 1,
                  ExcMeshFile(name,
                              line_number,
                              "a mesh needs at least 4 nodes and 1 element; "
                              "the file declares " +
                                std::to_string(n_nodes) + " nodes and " +
                                std::to_string(n_elements) + " elements."));
    }

    // The declared counts are not trusted with memory: storage grows with
    // the lines actually read, so that a corrupt count line ends in an
    // error message rather than in an allocation of its size.
    constexpr long        max_reserve = 1 << 20;
    std::vector<Point<3>> vertices;
    vertices.reserve(std::min(n_nodes, max_reserve));
    for (long n = 0; n < n_nodes; ++n)
      {
        AssertThrow(next_content_line(input, line, line_number),
                    ExcMeshFile(name,
                                line_number,
                                "the file ends after " + std::to_string(n) +
                                  " of " + std::to_string(n_nodes) +
                                  " nodes."));
        std::istringstream coordinates(line);
        std::string        rest;
        double             x, y, z;
        AssertThrow((coordinates >> x >> y >> z) && !(coordinates >> rest) &&
                      std::isfinite(x) && std::isfinite(y) && std::isfinite(z),
                    ExcMeshFile(name,
                                line_number,
                                "node " + std::to_string(n + 1) +
                                  ": expected three finite coordinates, "
                                  "found '" +
                                  line + "'."));
        vertices.emplace_back(x, y, z);
      }

    std::vector<CellData<3>> cells;
    cells.reserve(std::min(n_elements, max_reserve));
    std::vector<bool> node_used(n_nodes, false);
    for (long e = 0; e < n_elements; ++e)
      {
        AssertThrow(next_content_line(input, line, line_number),
                    ExcMeshFile(name,
                                line_number,
                                "the file ends after " + std::to_string(e) +
                                  " of " + std::to_string(n_elements) +
                                  " elements."));
        std::istringstream nodes(line);
        std::string        rest;
        long               v[4];
        AssertThrow((nodes >> v[0] >> v[1] >> v[2] >> v[3]) && !(nodes >> rest),
                    ExcMeshFile(name,
                                line_number,
                                "element " + std::to_string(e + 1) +
                                  ": expected four node numbers, found '" +
                                  line + "'."));
        CellData<3> cell(4);
        for (unsigned int i = 0; i < 4; ++i)
          {
            AssertThrow(v[i] >= 1 && v[i] <= n_nodes,
                        ExcMeshFile(name,
                                    line_number,
                                    "element " + std::to_string(e + 1) +
                                      " refers to node " +
                                      std::to_string(v[i]) +
                                      ", but nodes are numbered 1 to " +
                                      std::to_string(n_nodes) + "."));
            for (unsigned int j = 0; j < i; ++j)
              AssertThrow(v[i] != v[j],
                          ExcMeshFile(name,
                                      line_number,
                                      "element " + std::to_string(e + 1) +
                                        " uses node " + std::to_string(v[i]) +
                                        " twice."));
            cell.vertices[i]    = v[i] - 1;
            node_used[v[i] - 1] = true;
          }

        const Point<3> &a = vertices[v[0] - 1];
        Tensor<2, 3>    edges;
        for (unsigned int j = 0; j < 3; ++j)
          for (unsigned int k = 0; k < 3; ++k)
            edges[k][j] = vertices[v[j + 1] - 1][k] - a[k];
        const double det = determinant(edges);
        AssertThrow(
          det > 0.,
          ExcMeshFile(name,
                      line_number,
                      "element " + std::to_string(e + 1) +
                        " is inverted or flat: det[b-a, c-a, d-a] = " +
                        std::to_string(det) + " (it must be positive)."));
        cells.push_back(cell);
      }
    AssertThrow(!next_content_line(input, line, line_number),
                ExcMeshFile(name,
                            line_number,
                            "unexpected content after the last element: '" +
                              line + "'."));

    for (long n = 0; n < n_nodes; ++n)
      AssertThrow(node_used[n],
                  ExcMeshFile(name,
                              0,
                              "node " + std::to_string(n + 1) +
                                " belongs to no element; every node must be "
                                "used so that node numbers stay those of the "
                                "file."));

    tria.clear();
    tria.create_triangulation(vertices, cells, SubCellData());
  }



  template <int dim>
  void
  read_mesh(const std::string &filename, dealii::Triangulation<dim> &tria)
  {
    using namespace dealii;
    std::ifstream input(filename);
    AssertThrow(input.good(),
                ExcMeshFile(filename, 0, "the file cannot be opened."));
    AssertThrow(input.peek() != std::ifstream::traits_type::eof(),
                ExcMeshFile(filename, 0, "the file is empty."));

    const std::string extension = extension_of(filename);
    if (extension == "dat")
      {
        if constexpr (dim == 3)
          {
            Triangulation<3> new_tria;
            read_dat(input, new_tria, filename);
            tria.clear();
            tria.copy_triangulation(new_tria);
            return;
          }
        else
          AssertThrow(false,
                      ExcMeshFile(filename,
                                  0,
                                  "the .dat format holds 3D tetrahedral "
                                  "meshes; it cannot be read in " +
                                    std::to_string(dim) + "D."));
      }

    GridIn<dim> grid_in;
    // Read into a scratch triangulation so that a failure leaves the
    // caller's triangulation as it was.
    Triangulation<dim> new_tria;
    grid_in.attach_triangulation(new_tria);
    try
      {
        if (extension == "msh")
          grid_in.read_msh(input);
        else if (extension == "inp")
          grid_in.read_abaqus(input);
        else if (extension == "vtk")
          grid_in.read_vtk(input);
        else
          AssertThrow(false,
                      ExcMeshFile(filename,
                                  0,
                                  "unknown extension '." + extension +
                                    "'; supported are .msh (Gmsh), .inp "
                                    "(Abaqus), .vtk (VTK) and .dat."));
      }
    catch (const ExcMeshFile &)
      {
        throw;
      }
    catch (const std::exception &exc)
      {
        AssertThrow(false,
                    ExcMeshFile(filename,
                                0,
                                std::string("deal.II's GridIn could not read "
                                            "it:\n") +
                                  exc.what()));
      }
    AssertThrow(new_tria.n_active_cells() > 0,
                ExcMeshFile(filename, 0, "the mesh has no cells."));
    tria.clear();
    tria.copy_triangulation(new_tria);
  }

  template void
  read_mesh(const std::string &, dealii::Triangulation<2> &);
  template void
  read_mesh(const std::string &, dealii::Triangulation<3> &);
} // namespace GPUAssembly
